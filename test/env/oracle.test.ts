/**
 * Oracle episodes in real Chromium, the negative side: evaluated without the agent's work (start page,
 * wrong answer) or with its final state-changing action skipped, a sampled task scores 0. That the
 * oracle solves every sampled task is checked per site, in test/env/oracle-solves/.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { toEpisodeTask } from '../../env/embedded';
import type { WebArenaTask } from '../../env/tasks/schema';
import { oracleSample, useOracleFixture } from '../harness/oracleEpisodes';

const WRONG_ANSWER = 'I could not find it';

describe('oracle episodes in real Chromium: what scores 0', () => {
  const tasks = oracleSample();
  const oracle = useOracleFixture(tasks);

  test('scores 0 without the agent: wrong answer on the start page, no navigation, no state change', async () => {
    const failures: string[] = [];
    const contexts = await Promise.all([oracle.browser.newContext(), oracle.browser.newContext()]);
    await Promise.all(
      contexts.map(async (context, lane) => {
        const page = await context.newPage();
        for (const task of tasks.filter((_, i) => i % contexts.length === lane)) {
          const prepared = await oracle.env.prepareEpisode(context, toEpisodeTask(task, oracle.sites.urls));
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
    for (const task of tasks)
      if (task.eval.eval_types.includes('program_html') && !byTemplate.has(task.intent_template_id)) byTemplate.set(task.intent_template_id, task);
    assert.ok(byTemplate.size >= 30);
    const failures: string[] = [];
    await Promise.all(
      [...byTemplate.values()].map(async (task) => {
        const steps = task.oracle ?? [];
        const truncated = [...steps.slice(0, -2), ...steps.slice(-1)];
        const { outcome } = await oracle.episode({ ...toEpisodeTask(task, oracle.sites.urls), oracle: truncated });
        if (outcome.infraFailure || outcome.score !== 0) failures.push(`task ${task.task_id} (${task.intent}): ${outcome.reason} score ${outcome.score}`);
      }),
    );
    assert.deepEqual(failures, []);
  });
});
