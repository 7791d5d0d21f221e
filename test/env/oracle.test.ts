/**
 * Oracle episodes in real Chromium, through the browser side's episode loop and oracle policy: every
 * sampled task is solved (score 1); evaluated without the agent's work (start page, wrong answer) or
 * with its final state-changing action skipped, it scores 0. A seeded sample of >= 200 tasks covering
 * every template runs by default; WEBRL_ENV_ORACLE_ALL=1 runs every train and test task.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { chromium, type Browser } from 'playwright-core';
import { BrowserPool } from '../../browser/pool';
import { createOraclePolicy } from '../../browser/policies/oracle';
import { CHROMIUM_ARGS, ensureChromium } from '../../infra/tools';
import { EmbeddedEnvironment, toEpisodeTask } from '../../env/embedded';
import { startEmbeddedSites, type EmbeddedSites } from '../../env/embedded-sites';
import { Rng } from '../../env/random';
import { generateSplits } from '../../env/tasks/generate';
import type { WebArenaTask } from '../../env/tasks/schema';

const SAMPLE_SIZE = 200;
const WRONG_ANSWER = 'I could not find it';

/** One task of every template, then a seeded draw of the rest up to SAMPLE_SIZE. */
function sample(tasks: WebArenaTask[]): WebArenaTask[] {
  if (process.env.WEBRL_ENV_ORACLE_ALL === '1') return tasks;
  const rng = new Rng(20241103);
  const shuffled = rng.shuffle(tasks);
  const chosen = new Map<string, WebArenaTask>();
  for (const task of shuffled) if (![...chosen.values()].some((t) => t.intent_template_id === task.intent_template_id)) chosen.set(String(task.task_id), task);
  for (const task of shuffled) if (chosen.size < SAMPLE_SIZE) chosen.set(String(task.task_id), task);
  return [...chosen.values()];
}

describe('oracle solutions in real Chromium', () => {
  const { train, test: testSplit } = generateSplits();
  const tasks = sample([...train, ...testSplit]);
  assert.ok(tasks.length >= SAMPLE_SIZE);
  let sites: EmbeddedSites;
  let pool: BrowserPool;
  let browser: Browser;
  let env: EmbeddedEnvironment;

  before(async () => {
    sites = await startEmbeddedSites();
    env = new EmbeddedEnvironment({ siteUrls: sites.urls, tasks });
    pool = await BrowserPool.start({ size: 3 });
    browser = await chromium.launch({ executablePath: (await ensureChromium()).path, args: CHROMIUM_ARGS });
  });
  after(async () => {
    await pool?.close();
    await browser?.close();
    await sites?.stop();
  });

  /** Runs an episode, retrying infrastructure failures as the episode contract asks callers to. */
  async function episode(task: ReturnType<typeof toEpisodeTask>) {
    const policy = createOraclePolicy();
    let result = await pool.runEpisode({ task, policy, environment: env });
    for (let retry = 0; retry < 2 && result.outcome.infraFailure; retry++) result = await pool.runEpisode({ task, policy, environment: env });
    return result;
  }

  // One test per site, so that each stays well inside the per-test timeout on a slow machine.
  for (const site of [...new Set(tasks.map((task) => task.sites[0]!))].sort()) {
    const siteTasks = tasks.filter((task) => task.sites[0] === site);
    test(`solves every sampled ${site} task (${siteTasks.length} tasks)`, async () => {
      const failures: string[] = [];
      await Promise.all(
        siteTasks.map(async (task) => {
          const { outcome } = await episode(toEpisodeTask(task, sites.urls));
          if (outcome.score !== 1 || outcome.reason !== 'exit') failures.push(`task ${task.task_id} (${task.intent}): ${outcome.reason} score ${outcome.score} ${outcome.detail ?? ''}`);
        }),
      );
      assert.deepEqual(failures, []);
    });
  }

  test('scores 0 without the agent: wrong answer on the start page, no navigation, no state change', async () => {
    const failures: string[] = [];
    const contexts = await Promise.all([browser.newContext(), browser.newContext()]);
    await Promise.all(
      contexts.map(async (context, lane) => {
        const page = await context.newPage();
        for (const task of tasks.filter((_, i) => i % contexts.length === lane)) {
          const prepared = await env.prepareEpisode(context, toEpisodeTask(task, sites.urls));
          await page.goto(prepared.startUrl);
          const oracleAnswer = task.oracle?.at(-1)?.action === 'exit' ? (task.oracle.at(-1) as { message: string }).message : '';
          const onlyAnswer = task.eval.eval_types.every((t) => t === 'string_match');
          const wrong = await prepared.evaluate(page, onlyAnswer ? WRONG_ANSWER : oracleAnswer);
          if (wrong !== 0) failures.push(`task ${task.task_id}: scored ${wrong} untouched`);
          if (onlyAnswer && (await prepared.evaluate(page, oracleAnswer)) !== 1) failures.push(`task ${task.task_id}: the right answer alone did not score 1`);
          await prepared.dispose();
        }
      }),
    );
    await Promise.all(contexts.map((c) => c.close()));
    assert.deepEqual(failures, []);
  });

  test('scores 0 when the final state-changing action is skipped (one task per state-changing template)', async () => {
    const byTemplate = new Map<number | undefined, WebArenaTask>();
    for (const task of tasks) if (task.eval.eval_types.includes('program_html') && !byTemplate.has(task.intent_template_id)) byTemplate.set(task.intent_template_id, task);
    assert.ok(byTemplate.size >= 30);
    const failures: string[] = [];
    await Promise.all(
      [...byTemplate.values()].map(async (task) => {
        const oracle = task.oracle ?? [];
        const truncated = [...oracle.slice(0, -2), ...oracle.slice(-1)];
        const { outcome } = await episode({ ...toEpisodeTask(task, sites.urls), oracle: truncated });
        if (outcome.infraFailure || outcome.score !== 0) failures.push(`task ${task.task_id} (${task.intent}): ${outcome.reason} score ${outcome.score}`);
      }),
    );
    assert.deepEqual(failures, []);
  });
});
