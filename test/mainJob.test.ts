/**
 * The main job as a user runs it: `webrl campaign run` on a fresh data dir, with no S3 keys in the
 * environment, brings up its own stack (which generates the MinIO credentials) and starts a tiny
 * campaign; Ctrl-C leaves it waiting in Temporal with one line; the same command attaches and runs it
 * to the end and the report; run once more, it only reports. Ports are free ones, so it runs beside
 * other tests.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { CHROMIUM_ARGS, ensureChromium } from '../infra/tools';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { activityLabel, heartbeatProgress, PLAIN_PROGRESS_EVERY_MS, plainView } from '../campaign/mainJob';
import { runWebrl, startWebrl } from './harness/cli';
import { writeMainJobCampaign } from './harness/mainJob';

/** The environment of a user who set no S3 keys. */
function withoutS3Keys(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const key of ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AWS_PROFILE']) delete env[key];
  return env;
}

const MAIN_JOB_MS = 20 * 60_000;
/** Where tests leave what a person may want to look at afterwards (git-ignored). */
const ARTIFACTS = fileURLToPath(new URL('../test-artifacts/', import.meta.url));
const webrl = (args: string[], cwd: string) => runWebrl(args, { cwd, env: withoutS3Keys(), timeoutMs: MAIN_JOB_MS });

/** Lines the Temporal SDK logs (its logger's format, or core's); they belong in the worker log file. */
const SDK_LOG_LINE = /\[(TRACE|DEBUG|INFO|WARN|ERROR)\]|No workflows registered|task ?token|sdk_core|temporal_sdk/i;

/**
 * Within a phase (the status lines say which), each progress label's count never goes down: a label
 * names one activity's part (`runRolloutShard train shard 3`, `collectDemonstrations perturbed`).
 */
function assertCountersNeverGoBack(output: string): void {
  let phase = '';
  const last = new Map<string, number>();
  for (const line of output.split('\n')) {
    const status = /^phase (\d+)\//.exec(line);
    if (status) phase = status[1]!;
    if (!line.startsWith('  ')) continue;
    for (const item of line.trim().split(', ')) {
      const counter = /^(.+) (\d+)\/(\d+)(?: · about .+ left)?$/.exec(item);
      if (!counter) continue;
      const key = `phase ${phase}: ${counter[1]}`;
      const done = Number(counter[2]);
      assert.ok(done >= (last.get(key) ?? 0), `${key} went back to ${done}:\n${output}`);
      last.set(key, done);
    }
  }
}

describe('webrl campaign run (the main job) on a fresh data dir', () => {
  let dir: string;
  let configFile: string;
  let uiPort: number;
  let temporalPort: number;
  let chart: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'webrl-main-'));
    chart = join(dir, 'chart.svg');
    ({ configFile, temporalPort, temporalUiPort: uiPort } = await writeMainJobCampaign(dir, { name: 'first-run', seed: 5, phases: 3 }, { screenshotRate: 1 }));
  });
  after(async () => {
    await webrl(['stack', 'down', '-c', configFile], dir);
    await rm(dir, { recursive: true, force: true });
  });

  async function latestRunId(): Promise<string> {
    const connection = await Connection.connect({ address: `127.0.0.1:${temporalPort}` });
    try {
      return (await new Client({ connection, namespace: 'webrl' }).workflow.getHandle('campaign-first-run').describe()).runId;
    } finally {
      await connection.close();
    }
  }

  test('starts the stack and the campaign; Ctrl-C stops the worker with one plain line', async () => {
    const job = startWebrl(['campaign', 'run', '-c', configFile, '-o', chart], { cwd: dir, env: withoutS3Keys() });
    // An activity of the campaign is under way: the worker is busy when the user interrupts.
    await job.waitFor(/^phase 0\/3 · running · \w+/m, MAIN_JOB_MS);
    job.signal('SIGINT');
    const { code, output } = await job.exited;
    assert.equal(code, 130, output);
    assert.match(output, /starting MinIO/);
    assert.match(output, /^temporal\s+.*\n^minio\s+.*\n^chromium\s+/m, 'the tool check names all three tools');
    assert.match(output, /^worker log: .*state\/logs\/worker\.log$/m);
    assert.match(output, new RegExp(`Temporal UI: http://127\\.0\\.0\\.1:${uiPort}/namespaces/webrl/workflows/campaign-first-run`));
    assert.equal(
      output.trimEnd().split('\n').at(-1),
      'stopped: campaign first-run waits in Temporal at phase 0 of 3; run the same command to attach to it again',
    );
    assert.doesNotMatch(output, SDK_LOG_LINE);
  });

  test('status says in one line that no worker serves the waiting campaign', async () => {
    const status = await webrl(['campaign', 'status', '-c', configFile], dir);
    assert.equal(status.code, 1, status.output);
    assert.equal(status.output.trim().split('\n').length, 1, status.output);
    assert.match(
      status.output,
      /^webrl: campaign 'first-run' is running \(phase 0\) but no worker answers on task queue '[^']+'; start one with 'webrl worker' or 'npm run campaign'/,
    );
  });

  test('the same command attaches and runs SFT and three phases to the report, its table printed once', async () => {
    const run = await webrl(['campaign', 'run', '-c', configFile, '-o', chart, '--html', join(dir, 'report')], dir);
    assert.equal(run.code, 0, run.output);
    assert.match(run.output, /campaign first-run is already running; attaching to it/);
    assert.match(run.output, /^HTML report \(\d+ trajectories, [1-9]\d* screenshots\): .*report\/index\.html$/m);
    // The report's table has a row per phase (SFT and phases 1-3), with the ORM column, once.
    assert.match(run.output, /^\s*0 \(SFT\)\s+\d+\.\d%/m);
    assert.match(run.output, /^\s*3\s+\d+\.\d%/m);
    assert.equal(run.output.match(/^\s*phase\s+test success/gm)?.length, 1, run.output);
    assert.match(run.output, /ORM = evaluator/);
    // Whether each phase helped: success with its interval, and phases 1-3 against SFT with a paired interval and McNemar's p.
    assert.match(run.output, /^Did each phase help\?/m);
    assert.match(run.output, /^\s*0 \(SFT\)\s+\d+\s+\d+\.\d% \[\d+\.\d, \d+\.\d\]\s+-/m);
    for (const phase of [1, 2, 3]) {
      assert.match(
        run.output,
        new RegExp(
          `^\\s*${phase}\\s+\\d+\\s+\\d+\\.\\d% \\[\\d+\\.\\d, \\d+\\.\\d\\]\\s+[+-]\\d+\\.\\d \\[[+-]\\d+\\.\\d, [+-]\\d+\\.\\d\\]\\s+(<0\\.001|[01]\\.\\d{3})\\s`,
          'm',
        ),
      );
    }
    assert.match(run.output, /chart: .*chart\.svg/);
    // Its output is a pipe here: progress comes as plain status lines, never as bars redrawn line by line.
    assert.match(run.output, /^phase 1\/3 · running/m);
    assert.doesNotMatch(run.output, /[░█]/);
    assert.doesNotMatch(run.output, SDK_LOG_LINE);
    assertCountersNeverGoBack(run.output);
    const svg = await readFile(chart, 'utf8');
    assert.match(svg, /^<svg/);
    assert.equal(svg.match(/<g class="interval">/g)?.length, 4, "the chart draws each phase's interval");

    const { secretAccessKey } = JSON.parse(await readFile(join(dir, 'state', 'secrets', 'minio.json'), 'utf8')) as { secretAccessKey: string };
    assert.ok(!run.output.includes(secretAccessKey), 'the generated MinIO secret is never printed');
  });

  test('the HTML report opens from disk: from the phase table to a trajectory with its steps and screenshot', async () => {
    const browser = await chromium.launch({ executablePath: (await ensureChromium()).path, args: CHROMIUM_ARGS });
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      await page.goto(pathToFileURL(join(dir, 'report', 'index.html')).href);
      assert.match(await page.title(), /WebRL campaign first-run/);
      assert.equal(await page.locator('h2', { hasText: 'Did each phase help?' }).count(), 1);
      await page.locator('table a', { hasText: /^1$/ }).first().click();
      await page.waitForURL(/phase-1\.html$/);
      assert.match(
        await page.locator('h2:has-text("Did this phase help?") + p').innerText(),
        /^Against SFT \(phase 0\), over the \d+ tasks both evaluated: [+-]\d+\.\d \[[+-]\d+\.\d, [+-]\d+\.\d\] points \(95% interval\)/,
      );
      await page.locator('a', { hasText: 'steps' }).first().click();
      await page.waitForURL(/\/trajectories\/phase-1-\w+-[^/]+\.html$/);
      assert.ok((await page.locator('.step').count()) >= 1, 'the trajectory page shows its steps');
      assert.match(await page.locator('.step pre').first().innerText(), /<html|\[\d+\]|<body/i, 'with the observation the actor saw');
      const image = page.locator('.step img').first();
      await image.waitFor();
      assert.ok(await image.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0), 'and its screenshot loads from disk');
      await mkdir(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: join(ARTIFACTS, 'html-report-trajectory.png'), fullPage: false });
    } finally {
      await browser.close();
    }
  });

  test('campaign list shows the finished campaign once, completed at phase 3', async () => {
    const list = await webrl(['campaign', 'list', '-c', configFile], dir);
    assert.equal(list.code, 0, list.output);
    const rows = list.output.trim().split('\n');
    assert.equal(rows.length, 1, list.output);
    assert.match(rows[0]!, /^campaign-first-run\s+completed\s+phase 3 success \d+\.\d%/);
  });

  test('the main job on a finished campaign prints its report and starts no new run', async () => {
    const before = await latestRunId();
    const run = await webrl(['campaign', 'run', '-c', configFile, '-o', chart], dir);
    assert.equal(run.code, 0, run.output);
    assert.match(run.output, /campaign first-run has already finished \(completed\); its report:/);
    assert.equal(run.output.match(/^\s*phase\s+test success/gm)?.length, 1, run.output);
    assert.doesNotMatch(run.output, /Temporal UI:|worker polling/);
    assert.equal(await latestRunId(), before);
  });

  test('a held port is reported with a flag the main job takes', async () => {
    const holder = await new Promise<Server>((resolve) => {
      const server = createServer();
      server.listen(0, '127.0.0.1', () => resolve(server));
    });
    try {
      const held = (holder.address() as { port: number }).port;
      const run = await webrl(['campaign', 'run', '-c', configFile, '--data-dir', join(dir, 'other'), '--temporal-port', String(held)], dir);
      assert.equal(run.code, 1, run.output);
      assert.match(
        run.output,
        new RegExp(
          `port ${held} on 127\\.0\\.0\\.1 \\(Temporal gRPC\\) is held by another process; stop it or choose another port with --temporal-port or stack\\.temporalPort`,
        ),
      );
      const help = await webrl(['campaign', 'run', '--help'], dir);
      for (const flag of ['--temporal-port', '--temporal-ui-port', '--minio-port', '--minio-console-port', '--data-dir', '--site-ports']) {
        assert.ok(help.output.includes(flag), `campaign run takes ${flag}`);
      }
      const workerHelp = await webrl(['worker', '--help'], dir);
      assert.ok(workerHelp.output.includes('--site-ports'), 'worker takes --site-ports');
    } finally {
      holder.close();
    }
  });
});

describe('plain progress lines (output that is not a terminal)', () => {
  test('a line when the status changes; activity counts at most once a minute', () => {
    const lines: string[] = [];
    let clock = 0;
    const view = plainView(
      (line) => lines.push(line),
      () => clock,
    );
    const shard = (done: number) => [{ type: 'runRolloutShard', done, total: 16, attempt: 1 }];
    view.show('phase 1/3 · running · rollouts', shard(0));
    clock += 1000;
    view.show('phase 1/3 · running · rollouts', shard(4));
    clock += PLAIN_PROGRESS_EVERY_MS;
    view.show('phase 1/3 · running · rollouts', shard(12));
    view.show('phase 1/3 · running · scoreWithOrm', []);
    assert.deepEqual(lines, ['phase 1/3 · running · rollouts', '  runRolloutShard 0/16', '  runRolloutShard 12/16', 'phase 1/3 · running · scoreWithOrm']);
  });
});

describe('a training job on the live line', () => {
  test('an external trainer job shows its steps done of total and the time left, not 0/1 for the whole job', () => {
    // The heartbeat details models/backends/external/trainer.ts sends for a webrl-torch job.
    const beat = { model: 'actor', phase: 'external', fraction: 0.25, step: 3, totalSteps: 12, secondsLeft: 754 };
    const progress = { type: activityLabel('trainSft', beat), ...heartbeatProgress(beat), attempt: 1 };
    assert.deepEqual(progress, { type: 'trainSft actor · external', done: 3, total: 12, left: '13 min', attempt: 1 });
    const lines: string[] = [];
    plainView((line) => lines.push(line)).show('phase 0/2 · running · trainSft', [progress]);
    assert.deepEqual(lines, ['phase 0/2 · running · trainSft', '  trainSft actor · external 3/12 · about 13 min left']);
    // A trainer that prints only a fraction: a percentage; before its pace is known, no time left.
    assert.deepEqual(heartbeatProgress({ model: 'critic', phase: 'external', fraction: 0.4 }), { done: 40, total: 100 });
    assert.deepEqual(heartbeatProgress({ model: 'orm', phase: 'external', fraction: 0, secondsLeft: 7300 }), { done: 0, total: 100, left: '2 h 2 min' });
  });
});

describe('progress bar names', () => {
  test('a training bar names its model, and its stage when that is not the training steps', () => {
    assert.equal(activityLabel('fitOrmAndCriticToProbe', { model: 'orm', phase: 'training', step: 40, totalSteps: 400 }), 'fitOrmAndCriticToProbe orm');
    assert.equal(
      activityLabel('fitOrmAndCriticToProbe', { model: 'orm', phase: 'calibrating', step: 2, totalSteps: 6 }),
      'fitOrmAndCriticToProbe orm · calibrating',
    );
    assert.equal(activityLabel('runRolloutShard', { episodes: 16, episodesDone: 3 }), 'runRolloutShard');
  });
  test('a rollout shard and a demonstration pass name themselves', () => {
    assert.equal(activityLabel('runRolloutShard', { stage: 'train shard 3', episodes: 16, episodesDone: 3 }), 'runRolloutShard train shard 3');
    assert.equal(activityLabel('collectDemonstrations', { stage: 'perturbed', episodes: 200, episodesDone: 90 }), 'collectDemonstrations perturbed');
  });
});
