/**
 * The miniwob backend in real Chromium: MiniWoB++'s pages from the wheel cached under the data dir,
 * tasks whose intent is the seeded page's own instruction, the reward panel kept out of the
 * observation, the oracle plans solving their task types on a few seeds each (scored by the page's
 * own reward), a wrong answer and an expired episode recorded as failures, and the config's one-line errors.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { runEpisode } from '../../browser/episode';
import { executorOptionsFor } from '../../browser/executor';
import { observe, VIEWPORT } from '../../browser/observe';
import { createOraclePolicy } from '../../browser/policies/oracle';
import { serveDirectory, type StaticServer } from '../../browser/staticServer';
import { EXCLUDED_TASK_TYPES, TEXT_TASK_TYPES } from '../../env/backends/miniwob/catalog';
import { MiniwobEnvironment } from '../../env/backends/miniwob/environment';
import { ORACLE_TASK_TYPES } from '../../env/backends/miniwob/oracle';
import { ensureMiniwobPages } from '../../env/backends/miniwob/package';
import { miniwobConfigIssues, miniwobSettings } from '../../env/backends/miniwob/settings';
import { loadMiniwobTasks } from '../../env/backends/miniwob/tasks';
import { environmentSettings } from '../../env/backends/registry';
import { toEpisodeTask } from '../../env/tasks/episodeTask';
import { launchChromium } from '../browser/helpers';

// Two seeds per type keep the suite short; bench:env runs every plan on five (env.miniwob.oracle_success).
const SEEDS = [1, 2];
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

  test('the oracle plans solve their task types on a few seeds each, scored by the page', { timeout: 600_000 }, async () => {
    const tasks = await loadMiniwobTasks(
      ORACLE_TASK_TYPES.flatMap((type) => SEEDS.map((seed) => ({ type, seed }))),
      null,
      { browser },
    );
    const failures: string[] = [];
    const env = environment();
    for (const task of tasks) {
      if (!task.oracle) {
        failures.push(`${task.task_id}: no plan for "${task.intent}"`);
        continue;
      }
      const context = await browser.newContext({ viewport: VIEWPORT });
      try {
        const { outcome } = await runEpisode(context, {
          task: toEpisodeTask(task, {}),
          policy: createOraclePolicy(),
          environment: env,
          // A plan's solve step picks a step a round, as many as the page needs (book-flight reads its results a screen at a time).
          options: { maxSteps: task.oracle.some((step) => step.action === 'solve') ? 30 : task.oracle.length + 1 },
        });
        const result = env.results.get(String(task.task_id));
        if (outcome.score !== 1)
          failures.push(
            `${task.task_id} "${task.intent}": score ${outcome.score}, ${outcome.reason} ${outcome.detail ?? ''} raw ${result?.rawReward} ${result?.reason ?? ''}`,
          );
        else assert.ok(result!.rawReward! > 0);
      } finally {
        await context.close();
      }
    }
    assert.deepEqual(failures, []);
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
