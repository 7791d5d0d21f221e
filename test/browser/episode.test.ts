import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import type { EpisodeEnvironment } from '../../browser/contract';
import { InfrastructureError } from '../../browser/errors';
import { runEpisode, type EpisodeRequest, type EpisodeResult } from '../../browser/episode';
import { executorOptionsFor } from '../../browser/executor';
import { createOraclePolicy } from '../../browser/policies/oracle';
import type { Policy } from '../../browser/policies/policy';
import { buildPrompt } from '../../browser/policies/prompt';
import { serveDirectory, type StaticServer } from '../../browser/staticServer';
import { LocalTraceSink, readTraceFile, toTraceRows } from '../../browser/traces';
import { createShopEnvironment, shopTasks } from './fixtures/shop';
import { launchChromium, newContext, SITE_DIR } from './helpers';

let browser: Browser;
let server: StaticServer;

before(async () => {
  [browser, server] = await Promise.all([launchChromium(), serveDirectory(SITE_DIR)]);
});

after(async () => {
  await browser.close();
  await server.close();
});

/** A policy that answers round i with replies[i] (the last one repeats). */
function scripted(replies: string[]): Policy {
  return {
    name: 'scripted',
    async act({ task, observation, history }) {
      const response = replies[Math.min(history.length, replies.length - 1)]!;
      return {
        response,
        prompt: buildPrompt(
          task.intent,
          history.map((h) => h.response),
          observation.html,
        ),
      };
    },
  };
}

const TASK = { task_id: 'e1', intent: 'What is the price of the Sun Hat?', start_url: 'index.html', expected_answer: '$19.25' };

async function run(request: Partial<EpisodeRequest> & Pick<EpisodeRequest, 'policy'>): Promise<EpisodeResult> {
  const context = await newContext(browser);
  try {
    return await runEpisode(context, { task: TASK, environment: createShopEnvironment(server.url), ...request });
  } finally {
    await context.close();
  }
}

describe('runEpisode', () => {
  test('an oracle episode exits with its answer and is scored by the environment', async () => {
    const environment = createShopEnvironment(server.url);
    const task = shopTasks(1)[0]!;
    const { outcome, steps } = await run({ task, environment, policy: createOraclePolicy(), traceId: 'trace-a' });
    assert.deepEqual(
      { ...outcome, durationMs: 0 },
      { taskId: 'shop-0', traceId: 'trace-a', score: 1, steps: 3, answer: '$59.99', infraFailure: false, reason: 'exit', durationMs: 0 },
    );
    assert.deepEqual(environment.stats, { prepared: 1, evaluated: 1, disposed: 1 });
    assert.deepEqual(
      steps.map((s) => s.action?.kind),
      ['Search', 'Click', 'exit'],
    );
    assert.deepEqual(
      steps.map((s) => s.execution),
      [{ ok: true }, { ok: true }, null],
    );
    assert.match(steps[1]!.url, /results\.html\?q=red\+running\+shoes$/);
    assert.ok(steps.every((s) => s.timings.observeMs > 0));

    const rows = toTraceRows('trace-a', task.intent, steps, outcome);
    assert.deepEqual(Object.keys(rows[0]!).slice(0, 6), ['trace_id', 'index', 'prompt', 'html', 'response', 'target']);
    assert.deepEqual(
      rows.map((r) => [r.index, r.prompt === task.intent, r.final]),
      [
        [0, true, false],
        [1, false, false],
        [2, false, true],
      ],
    );
  });

  test('with the webrl profile the oracle still solves the shop tasks, on pages printed as the reference prints them', async () => {
    const environment = createShopEnvironment(server.url);
    const options = { executor: executorOptionsFor('webrl') };
    for (const task of shopTasks(3)) {
      const { outcome, steps } = await run({ task, environment, policy: createOraclePolicy(), options });
      assert.equal(outcome.score, 1, `${task.task_id}: ${outcome.reason} ${outcome.detail ?? ''}`);
      assert.ok(
        steps.every((s) => /data-text="/.test(s.html) && !/data-label="/.test(s.html)),
        'webrl attributes',
      );
      const acted = steps.filter((s) => s.execution);
      assert.ok(
        acted.every((s) => s.timings.settleMs >= 450),
        `the 500 ms minimum wait: ${acted.map((s) => Math.round(s.timings.settleMs))}`,
      );
    }
  });

  test('with screenshots on, each step stores a PNG beside the trace and the rows point to it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'webrl-episode-shots-'));
    try {
      const sink = new LocalTraceSink(dir);
      const { outcome } = await run({
        policy: scripted(['do(action="Scroll Down")', 'exit(message="$19.25")']),
        traceSink: sink,
        options: { screenshots: true },
      });
      assert.equal(outcome.traceKey, 'e1.jsonl');
      const rows = await readTraceFile(join(dir, 'e1.jsonl'));
      assert.deepEqual(
        rows.map((r) => r.screenshot),
        ['e1/step-0.png', 'e1/step-1.png'],
      );
      const png = await readFile(join(dir, 'e1/step-1.png'));
      assert.deepEqual([...png.subarray(1, 4)], [0x50, 0x4e, 0x47], 'a PNG file');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('five unparseable replies in a row stop the episode; it is still evaluated', async () => {
    const { outcome, steps } = await run({ policy: scripted(['I am not sure what to do.']) });
    assert.equal(outcome.reason, 'parse_failures');
    assert.equal(outcome.steps, 5);
    assert.equal(outcome.infraFailure, false);
    assert.equal(outcome.score, 0);
    assert.ok(steps.every((s) => s.parseError?.code === 'no_action' && s.execution === null));
  });

  test('a parse failure breaks a run of identical actions; the fifth identical action is not executed', async () => {
    const down = 'do(action="Scroll Down")';
    const { outcome, steps } = await run({ policy: scripted([down, down, 'oops', down, down, down, down, down]) });
    assert.equal(outcome.reason, 'repeated_actions');
    assert.equal(outcome.steps, 8);
    assert.deepEqual(
      steps.map((s) => s.execution !== null),
      [true, true, false, true, true, true, true, false],
    );
  });

  test('max steps ends an episode that never exits', async () => {
    const { outcome } = await run({
      policy: scripted(['do(action="Scroll Down")', 'do(action="Scroll Up")', 'do(action="Scroll Down")', 'do(action="Scroll Up")']),
      options: { maxSteps: 3 },
    });
    assert.deepEqual([outcome.reason, outcome.steps, outcome.answer], ['max_steps', 3, null]);
  });

  test('a failed action is a failed step, not the end of the episode', async () => {
    const { outcome, steps } = await run({ policy: scripted(['do(action="Click", element="999")', 'exit(message="$19.25")']) });
    assert.equal(steps[0]!.execution?.ok, false);
    assert.match(steps[0]!.execution?.error ?? '', /element 999 is not on the page/);
    assert.deepEqual([outcome.reason, outcome.score], ['exit', 1]);
  });

  test('the deadline stops a policy that takes too long', async () => {
    const slow: Policy = { name: 'slow', act: () => new Promise(() => undefined) };
    const started = performance.now();
    const { outcome } = await run({ policy: slow, options: { deadlineMs: 300 } });
    assert.equal(outcome.reason, 'deadline');
    assert.equal(outcome.infraFailure, false);
    assert.ok(performance.now() - started < 10_000);
  });

  test('an oracle that cannot find its element is a policy error, not an infrastructure failure', async () => {
    const task = { ...TASK, oracle: [{ action: 'Click' as const, target: { text: 'No such link' } }] };
    const { outcome } = await run({ task, policy: createOraclePolicy() });
    assert.equal(outcome.reason, 'policy_error');
    assert.equal(outcome.infraFailure, false);
    assert.match(outcome.detail ?? '', /No such link/);
  });

  test('an unreachable model, a broken environment or evaluator are infrastructure failures', async () => {
    const down: Policy = {
      name: 'down',
      act: async () => {
        throw new InfrastructureError('policy_unavailable', 'completion failed after 3 attempt(s)');
      },
    };
    const modelDown = await run({ policy: down });
    assert.deepEqual([modelDown.outcome.infraFailure, modelDown.outcome.reason], [true, 'policy_unavailable']);

    const broken: EpisodeEnvironment = {
      prepareEpisode: async () => {
        throw new Error('database is down');
      },
    };
    const envDown = await run({ policy: scripted(['exit(message="x")']), environment: broken });
    assert.deepEqual([envDown.outcome.infraFailure, envDown.outcome.reason, envDown.outcome.steps], [true, 'environment_error', 0]);
    assert.match(envDown.outcome.detail ?? '', /database is down/);

    let disposed = 0;
    const badEvaluator: EpisodeEnvironment = {
      prepareEpisode: async () => ({
        startUrl: `${server.url}/index.html`,
        evaluate: async () => {
          throw new Error('evaluator crashed');
        },
        dispose: async () => void disposed++,
      }),
    };
    const evalDown = await run({ policy: scripted(['exit(message="x")']), environment: badEvaluator });
    assert.deepEqual([evalDown.outcome.infraFailure, evalDown.outcome.reason, disposed], [true, 'evaluation_error', 1]);
  });

  test('an evaluator slower than a step is waited for; one that never answers is an infrastructure failure, not a score', async () => {
    const evaluating = (evaluate: () => Promise<number>): EpisodeEnvironment => ({
      prepareEpisode: async () => ({ startUrl: `${server.url}/index.html`, evaluate, dispose: async () => undefined }),
    });
    // A step may take 5 s here; the evaluator takes longer, and is waited for.
    const stepTimeoutMs = 5_000;
    const slowerThanAStep = await run({
      policy: scripted(['exit(message="x")']),
      environment: evaluating(() => new Promise((resolve) => setTimeout(() => resolve(1), stepTimeoutMs + 1_000))),
      options: { executor: { ...executorOptionsFor('default', 0), stepTimeoutMs }, evaluationTimeoutMs: 60_000 },
    });
    assert.deepEqual([slowerThanAStep.outcome.infraFailure, slowerThanAStep.outcome.score, slowerThanAStep.outcome.detail], [false, 1, undefined]);
    const silent = await run({
      policy: scripted(['exit(message="x")']),
      environment: evaluating(() => new Promise<number>(() => undefined)),
      options: { evaluationTimeoutMs: 500 },
    });
    assert.deepEqual([silent.outcome.infraFailure, silent.outcome.reason, silent.outcome.score], [true, 'evaluation_error', 0]);
    assert.equal(silent.outcome.detail, 'evaluating the episode: the evaluator took longer than 500 ms');
  });

  test('closing the context under a running episode ends it as an infrastructure failure', async () => {
    const context = await newContext(browser);
    const closing: Policy = {
      name: 'closing',
      async act({ task, observation, history }) {
        if (history.length === 1) await context.close();
        return { response: 'do(action="Scroll Down")', prompt: buildPrompt(task.intent, [], observation.html) };
      },
    };
    const { outcome } = await runEpisode(context, { task: TASK, environment: createShopEnvironment(server.url), policy: closing });
    assert.equal(outcome.infraFailure, true);
    assert.equal(outcome.reason, 'browser_error');
    assert.equal(outcome.steps, 2);
  });
});
