/**
 * The miniwob backend in real Chromium: MiniWoB++'s pages from the wheel cached under the data dir,
 * tasks whose intent is the seeded page's own instruction, the reward panel kept out of the
 * observation, the whole text subset run through `webrl rollout --miniwob` with the oracle (one seed a
 * type, its per-type table printed; every type with a plan solved, scored by the page's own reward), a
 * wrong answer and an expired episode recorded as failures, an episode that stops at the page's end
 * (nothing after it in the trace, the trajectory's rounds or the training rows), and the config's
 * one-line errors.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { experienceRowsOf } from '../../activities/campaign/experience';
import { stepRecordOf } from '../../activities/campaign/trainingRecords';
import type { Action } from '../../browser/contract';
import { runEpisode } from '../../browser/episode';
import type { EpisodeOutcome } from '../../browser/episodeRecord';
import { executorOptionsFor } from '../../browser/executor';
import { formatAction } from '../../browser/grammar';
import { observe, VIEWPORT } from '../../browser/observe';
import { createOraclePolicy } from '../../browser/policies/oracle';
import type { Policy } from '../../browser/policies/policy';
import { buildPrompt } from '../../browser/policies/prompt';
import { createPromptBuilder } from '../../browser/policies/promptBudget';
import { webrlLlama3Format } from '../../browser/policies/promptFormat';
import { serveDirectory, type StaticServer } from '../../browser/staticServer';
import { LocalTraceSink, readTraceFile } from '../../browser/traces';
import { EXCLUDED_TASK_TYPES, TEXT_TASK_TYPES } from '../../env/backends/miniwob/catalog';
import { MiniwobEnvironment } from '../../env/backends/miniwob/environment';
import { ORACLE_TASK_TYPES } from '../../env/backends/miniwob/oracle';
import { ensureMiniwobPages } from '../../env/backends/miniwob/package';
import { miniwobConfigIssues, miniwobSettings } from '../../env/backends/miniwob/settings';
import { loadMiniwobTasks } from '../../env/backends/miniwob/tasks';
import type { SuiteScore } from '../../env/backends/miniwob/suiteScore';
import { registerRolloutCommand } from '../../cli/rollout';
import { environmentSettings } from '../../env/backends/registry';
import { toEpisodeTask } from '../../env/tasks/episodeTask';
import { recordingPolicy } from '../../models/recordingPolicy';
import { launchChromium } from '../browser/helpers';

// One seed per type keeps the suite short; bench:env runs every plan on five (env.miniwob.oracle_success).
const SEED = 2;
const configInput = { campaign: { phase: { curriculum: true } }, models: { taskGenerator: { backend: 'embedded' }, judge: undefined } } as never;

describe('miniwob backend', () => {
  let browser: Browser;
  let server: StaticServer;
  let root: string;

  before(async () => {
    root = (await ensureMiniwobPages()).root;
    server = await serveDirectory(root);
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  const environment = (timeLimitMs: number | null = null) => new MiniwobEnvironment({ root, baseUrl: server.url, timeLimitMs });

  test('the subset has at least 40 task types, every other page is listed with a reason, and 20 have oracles', () => {
    assert.ok(TEXT_TASK_TYPES.length >= 40);
    assert.equal(TEXT_TASK_TYPES.length + Object.keys(EXCLUDED_TASK_TYPES).length, 130);
    assert.ok(ORACLE_TASK_TYPES.length >= 20, `${ORACLE_TASK_TYPES.length} oracle task types`);
    for (const type of ORACLE_TASK_TYPES) assert.ok((TEXT_TASK_TYPES as readonly string[]).includes(type), type);
  });

  test('the config: miniwob parses in campaign.environment; overlapping seeds and unknown or excluded task types are one-line errors', () => {
    const parsed = environmentSettings.parse({ backend: 'miniwob', miniwob: { taskTypes: ['click-button'] } });
    assert.equal(parsed.backend, 'miniwob');
    const settings = miniwobSettings.parse({
      backend: 'miniwob',
      miniwob: { taskTypes: ['click-button', 'no-such-task', 'drag-box'], seeds: { train: { from: 0, to: 50 }, test: { from: 40, to: 60 } } },
    });
    const messages = miniwobConfigIssues(configInput, settings).map((issue) => issue.message);
    assert.deepEqual(messages, [
      'the train seeds [0, 50) and the test seeds [40, 60) overlap',
      'miniwob 1.1.0 has no task type no-such-task',
      `task type drag-box is left out of the text subset: ${EXCLUDED_TASK_TYPES['drag-box']}`,
    ]);
    assert.deepEqual(miniwobConfigIssues(configInput, miniwobSettings.parse({ backend: 'miniwob' })), []);
  });

  test('a task is a type and a seed; its intent is the seeded page instruction, the same for the same seed', async () => {
    const [a, b, c] = await loadMiniwobTasks(
      [
        { type: 'click-button', seed: 7 },
        { type: 'click-button', seed: 7 },
        { type: 'enter-text', seed: 7 },
      ],
      null,
      { browser },
    );
    assert.equal(a!.task_id, 'miniwob:click-button:7');
    assert.equal(a!.start_url, '__MINIWOB__/click-button.html?seed=7');
    assert.deepEqual(a!.sites, ['miniwob']);
    assert.match(a!.intent, /^Click on the ".+" button\.$/);
    assert.equal(b!.intent, a!.intent);
    assert.match(c!.intent, /^Enter ".+" into the text field and press Submit\.$/);
    await assert.rejects(loadMiniwobTasks([{ type: 'no-such-task', seed: 1 }], null, { browser }), /^Error: miniwob 1\.1\.0 has no task page no-such-task/);
  });

  test('the observation is the task area: no reward panel, no START cover, no instruction', async () => {
    const context = await browser.newContext({ viewport: VIEWPORT });
    try {
      const [task] = await loadMiniwobTasks([{ type: 'click-button', seed: 3 }], null, { browser });
      const prepared = await environment().prepareEpisode(context, toEpisodeTask(task!, {}));
      const page = await context.newPage();
      await page.goto(prepared.startUrl);
      const observation = await observe(page);
      for (const hidden of ['Last reward', 'Last 10 average', 'Time left', 'Episodes done', 'START', 'Click on the']) {
        assert.ok(!observation.html.includes(hidden), `${hidden} in ${observation.html}`);
      }
      assert.match(observation.html, /<button id="\d+"/);
    } finally {
      await context.close();
    }
  });

  test(
    'the whole suite through `webrl rollout --miniwob` with the oracle: the per-type table; every type with a plan solved, scored by the page',
    { timeout: 900_000 },
    async () => {
      const out = await mkdtemp(join(tmpdir(), 'webrl-miniwob-suite-'));
      try {
        const program = new Command('webrl').exitOverride();
        registerRolloutCommand(program);
        const printed: string[] = [];
        const log = console.log;
        console.log = (...parts: unknown[]) => void printed.push(parts.join(' '));
        try {
          await program.parseAsync(
            ['rollout', '--miniwob', '--miniwob-seeds', `${SEED}:${SEED + 1}`, '--policy', 'oracle', '--max-steps', '60', '--concurrency', '2', '--out', out],
            {
              from: 'user',
            },
          );
        } finally {
          console.log = log;
        }
        const suite = JSON.parse(await readFile(join(out, 'suite.json'), 'utf8')) as SuiteScore;
        const table = printed.slice(printed.findIndex((line) => line.startsWith('task type')));
        console.log(table.join('\n'));
        assert.deepEqual(
          suite.types.map((t) => t.type),
          [...TEXT_TASK_TYPES].sort(),
        );
        assert.ok(suite.types.every((t) => t.episodes === 1));
        const unsolved = suite.types.filter((t) => ORACLE_TASK_TYPES.includes(t.type) && t.rate !== 1).map((t) => t.type);
        assert.deepEqual(unsolved, [], `oracle types not solved on seed ${SEED}`);
        for (const t of suite.types.filter((t) => !ORACLE_TASK_TYPES.includes(t.type))) assert.equal(t.rate, 0, `${t.type} has no plan`);
        assert.ok(suite.meanOverTypes >= ORACLE_TASK_TYPES.length / TEXT_TASK_TYPES.length);
        assert.ok(Math.abs(suite.meanOverTypes - suite.types.reduce((sum, t) => sum + t.rate, 0) / suite.types.length) < 1e-12);
        assert.ok(printed.includes(`BENCH miniwob.mean_over_types ${suite.meanOverTypes.toFixed(3)} fraction`));
        assert.ok(printed.includes('BENCH miniwob.success.click-button 1.000 fraction'));
        const outcomes = (await readFile(join(out, 'outcomes.jsonl'), 'utf8'))
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line) as EpisodeOutcome);
        for (const outcome of outcomes.filter((o) => o.score === 1)) assert.ok(Number(outcome.evaluation?.rawReward) > 0, String(outcome.taskId));
      } finally {
        await rm(out, { recursive: true, force: true });
      }
    },
  );

  test("the page's end ends the episode: nothing after it is in the trace, the trajectory's rounds or the training rows", async () => {
    const [task] = await loadMiniwobTasks([{ type: 'click-test-2', seed: 4 }], null, { browser });
    const right = /button (\S+)\./.exec(task!.intent)![1]!;
    const wrong = right === 'ONE' ? 'TWO' : 'ONE';
    // A scroll (the page goes on), the target (the page ends with reward 1), then what must not count.
    const script: ((elements: { id: number; text: string }[]) => Action)[] = [
      () => ({ kind: 'Scroll Down' }),
      (elements) => ({ kind: 'Click', element: elements.find((e) => e.text === right)!.id }),
      (elements) => ({ kind: 'Click', element: elements.find((e) => e.text === wrong)!.id }),
      () => ({ kind: 'exit', message: '' }),
    ];
    const scripted: Policy = {
      name: 'scripted',
      async act({ task: { intent }, observation, history }) {
        const response = formatAction(script[history.length]!(observation.elements));
        const prompt = buildPrompt(
          intent,
          history.map((round) => round.response),
          observation.html,
        );
        return { response, prompt };
      },
    };
    const recorder = recordingPolicy(scripted);
    const dir = await mkdtemp(join(tmpdir(), 'miniwob-end-'));
    const context = await browser.newContext({ viewport: VIEWPORT });
    try {
      const { outcome, steps } = await runEpisode(context, {
        task: toEpisodeTask(task!, {}),
        policy: recorder.policy,
        environment: environment(),
        traceSink: new LocalTraceSink(dir),
      });
      assert.equal(outcome.reason, 'environment_ended');
      assert.equal(outcome.score, 1);
      assert.deepEqual(
        steps.map((step) => step.action?.kind),
        ['Scroll Down', 'Click'],
      );
      assert.equal(outcome.steps, 2);
      const trace = await readTraceFile(join(dir, outcome.traceKey!));
      assert.deepEqual(
        trace.map((row) => [row.response, row.final]),
        steps.map((step, i) => [step.response, i === 1]),
      );
      assert.equal(recorder.rounds.length, 2, 'the rounds the trajectory record keeps');
      const rows = experienceRowsOf({ taskId: String(task!.task_id), traceKey: outcome.traceKey!, rounds: recorder.rounds }, outcome.score);
      assert.deepEqual(
        rows.map((row) => [row.response, row.reward, row.nextState === null]),
        [
          [steps[0]!.response, 0, false],
          [steps[1]!.response, 1, true],
        ],
      );
      const scope = { campaignId: 'c', phase: 1, gamma: 0.9, prompts: createPromptBuilder(webrlLlama3Format) };
      const records = await Promise.all(rows.map((row) => stepRecordOf(row, 'rollout', null, scope)));
      assert.deepEqual(
        records.map((record) => [record.step, record.done, record.reward]),
        [
          [0, false, 0],
          [1, true, 1],
        ],
      );
    } finally {
      await context.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('a wrong answer is a failure with the raw reward kept; an expired episode is a recorded failure', async () => {
    const env = environment();
    const [task] = await loadMiniwobTasks([{ type: 'click-test-2', seed: 4 }], null, { browser });
    const right = /button (\S+)\./.exec(task!.intent)![1]!;
    const wrong = right === 'ONE' ? 'TWO' : 'ONE';
    const wrongPlan = { ...task!, oracle: [{ action: 'Click' as const, target: { tag: 'button', text: wrong } }] };
    let context = await browser.newContext({ viewport: VIEWPORT });
    const wrongRun = await runEpisode(context, { task: toEpisodeTask(wrongPlan, {}), policy: createOraclePolicy(), environment: env });
    await context.close();
    assert.equal(wrongRun.outcome.score, 0);
    assert.equal(env.results.get(String(task!.task_id))!.rawReward, -1);
    assert.equal(env.results.get(String(task!.task_id))!.expired, false);
    assert.deepEqual(
      wrongRun.outcome.evaluation,
      { rawReward: -1, reward: -1, reason: env.results.get(String(task!.task_id))!.reason, expired: false },
      'the page’s numbers go into the outcome (and the trace)',
    );

    // A one-second limit and a plan that waits (scrolls) past it.
    const slow = new MiniwobEnvironment({ root, baseUrl: server.url, timeLimitMs: 1000 });
    const waiting = {
      ...task!,
      oracle: [{ action: 'Scroll Down' as const }, { action: 'Scroll Down' as const }, { action: 'Scroll Down' as const }, { action: 'Scroll Down' as const }],
    };
    context = await browser.newContext({ viewport: VIEWPORT });
    const expiredRun = await runEpisode(context, {
      task: toEpisodeTask(waiting, {}),
      policy: createOraclePolicy(),
      environment: slow,
      options: { executor: executorOptionsFor('default', 600) },
    });
    await context.close();
    assert.equal(expiredRun.outcome.score, 0);
    const expired = slow.results.get(String(task!.task_id))!;
    assert.equal(expired.expired, true);
    assert.equal(expired.rawReward, -1);
    assert.equal(expired.reason, 'timed out');
    assert.deepEqual(expiredRun.outcome.evaluation, { rawReward: -1, reward: expired.reward, reason: 'timed out', expired: true });
  });
});
