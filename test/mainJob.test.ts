/**
 * The main job as a user first runs it: `webrl campaign run` on a fresh data dir, with no S3 keys in
 * the environment, brings up its own stack (which generates the MinIO credentials), runs a tiny
 * campaign to the end and prints the report. Ports are free ones, so it runs beside other tests.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { activityLabel, PLAIN_PROGRESS_EVERY_MS, plainView } from '../campaign/mainJob';
import { freePort } from '../infra/processes';
import { runWebrl } from './harness/cli';

/** The environment of a user who set no S3 keys. */
function withoutS3Keys(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const key of ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AWS_PROFILE']) delete env[key];
  return env;
}

const webrl = (args: string[], cwd: string) => runWebrl(args, { cwd, env: withoutS3Keys(), timeoutMs: 20 * 60_000 });

describe('webrl campaign run (the main job) on a fresh data dir', () => {
  let dir: string;
  let configFile: string;
  let uiPort: number;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'webrl-main-'));
    uiPort = await freePort();
    const config = {
      campaign: {
        name: 'first-run',
        seed: 5,
        phase: { tasksPerPhase: 3, rolloutShardSize: 2, rolloutShardsInFlight: 2, criticBand: [0, 1] },
        environment: { testTasks: 3, demonstrationTasks: 12, maxSteps: 6, episodeDeadlineSeconds: 120 },
        training: { sftEpochs: 2, ormEpochs: 2, criticEpochs: 1, actorEpochs: 1, checkpointEvery: 4 },
      },
      stack: {
        dataDir: join(dir, 'state'),
        temporalPort: await freePort(),
        temporalUiPort: uiPort,
        minioPort: await freePort(),
        minioConsolePort: await freePort(),
      },
      concurrency: { browserContexts: 2 },
      sites: { ports: { shopping: await freePort(), shopping_admin: await freePort(), reddit: await freePort(), gitlab: await freePort() } },
    };
    configFile = join(dir, 'campaign.json');
    await writeFile(configFile, JSON.stringify(config));
  });
  after(async () => {
    await webrl(['stack', 'down', '-c', configFile], dir);
    await rm(dir, { recursive: true, force: true });
  });

  test('starts the stack, runs SFT and one phase, and ends with the report and chart', async () => {
    const run = await webrl(['campaign', 'run', '-c', configFile, '--phases', '1', '-o', join(dir, 'chart.svg')], dir);
    assert.equal(run.code, 0, run.output);
    assert.match(run.output, /starting MinIO/);
    assert.match(run.output, new RegExp(`Temporal UI: http://127\\.0\\.0\\.1:${uiPort}/namespaces/webrl/workflows/campaign-first-run`));
    // The report's table has a row per phase (SFT and phase 1), then names the chart it wrote.
    assert.match(run.output, /^\s*0 \(SFT\)\s+\d+\.\d%/m);
    assert.match(run.output, /^\s*1\s+\d+\.\d%/m);
    assert.match(run.output, /chart: .*chart\.svg/);
    // Its output is a pipe here: progress comes as plain status lines, never as bars redrawn line by line.
    assert.match(run.output, /^phase 1\/1 · running/m);
    assert.doesNotMatch(run.output, /[░█]/);
    assert.match(await readFile(join(dir, 'chart.svg'), 'utf8'), /^<svg/);

    const { secretAccessKey } = JSON.parse(await readFile(join(dir, 'state', 'secrets', 'minio.json'), 'utf8')) as { secretAccessKey: string };
    assert.ok(!run.output.includes(secretAccessKey), 'the generated MinIO secret is never printed');
  });
});

describe('plain progress lines (output that is not a terminal)', () => {
  test('a line when the status changes; activity counts at most once a minute', () => {
    const lines: string[] = [];
    let clock = 0;
    const view = plainView((line) => lines.push(line), () => clock);
    const shard = (done: number) => [{ type: 'runRolloutShard', done, total: 16 }];
    view.show('phase 1/3 · running · rollouts', shard(0));
    clock += 1000;
    view.show('phase 1/3 · running · rollouts', shard(4));
    clock += PLAIN_PROGRESS_EVERY_MS;
    view.show('phase 1/3 · running · rollouts', shard(12));
    view.show('phase 1/3 · running · scoreWithOrm', []);
    assert.deepEqual(lines, [
      'phase 1/3 · running · rollouts',
      '  runRolloutShard 0/16',
      '  runRolloutShard 12/16',
      'phase 1/3 · running · scoreWithOrm',
    ]);
  });
});

describe('progress bar names', () => {
  test('a training bar names its model, and its stage when that is not the training steps', () => {
    assert.equal(activityLabel('fitOrmAndCriticToProbe', { model: 'orm', phase: 'training', step: 40, totalSteps: 400 }), 'fitOrmAndCriticToProbe orm');
    assert.equal(activityLabel('fitOrmAndCriticToProbe', { model: 'orm', phase: 'calibrating', step: 2, totalSteps: 6 }), 'fitOrmAndCriticToProbe orm · calibrating');
    assert.equal(activityLabel('runRolloutShard', { episodes: 16, episodesDone: 3 }), 'runRolloutShard');
  });
});
