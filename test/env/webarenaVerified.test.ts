/**
 * WebArena-Verified through the project: its task file (the installed package's 812 tasks) and hard
 * subset load and validate, and its official evaluator (the PyPI package in its own environment,
 * one long-lived process) scores the repository's demo logs (tasks 107 and 108,
 * test/fixtures/webarena-verified/demo) exactly as their eval_result.json says, and a failing variant
 * of each; an exit message that is not JSON is a scored failure with its reason.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sharedVerifiedEvaluator, taskEvalResultSchema } from '../../env/evaluators/verified/client';
import { scoreVerified } from '../../env/evaluators/verified/harness';
import { parseTasksReport, readTaskFile, validateTaskFile } from '../../env/tasks/loader';
import type { WebArenaTask } from '../../env/tasks/schema';
import { DeterministicJudge } from '../../env/evaluators/judge';

const DEMO = join(import.meta.dirname, '..', 'fixtures', 'webarena-verified', 'demo');
/** The demo's shop admin (the HAR's host), as the package's config would name it. */
const SITES = { shopping_admin: 'http://192.168.1.35:7780/admin' };

describe('WebArena-Verified', () => {
  let tasks: WebArenaTask[];
  let network: Record<string, unknown>[];

  before(async () => {
    tasks = await readTaskFile('webarena-verified');
    network = (JSON.parse(await readFile(join(DEMO, 'network.har'), 'utf8')) as { log: { entries: Record<string, unknown>[] } }).log.entries;
  });
  after(async () => (await sharedVerifiedEvaluator()).close());

  it('validates the package task file (812 tasks) and selects exactly the 258 hard ones', async () => {
    const full = await validateTaskFile('webarena-verified', { siteUrls: {}, judge: new DeterministicJudge() });
    assert.deepEqual(full.problems, []);
    assert.equal(full.total, 812);
    assert.equal(full.harness, 'webarena-verified');
    assert.equal(full.counts.byEvalType.AgentResponseEvaluator, 812);
    // 663 NetworkEventEvaluator entries, on 488 tasks (some tasks check several requests).
    assert.equal(full.counts.byEvalType.NetworkEventEvaluator, 488);

    const assets = await (await sharedVerifiedEvaluator()).assets();
    const ids = (JSON.parse(await readFile(join(assets.subsets, 'webarena-verified-hard.json'), 'utf8')) as { task_ids: number[] }).task_ids;
    assert.equal(ids.length, 258);
    const hard = await readTaskFile('webarena-verified-hard');
    assert.deepEqual(hard.map((task) => task.task_id), ids);
    // A subset file of one's own selects the same way.
    const own = await readTaskFile(join(assets.subsets, 'webarena-verified-hard.json'));
    assert.deepEqual(own.map((task) => task.task_id), ids);
  });

  it('lists every invalid task of a Verified file, each with its field', async () => {
    const raw = [
      { ...(tasks[0]!.verified as object), start_urls: [] },
      { ...(tasks[1]!.verified as object), eval: [{ evaluator: 'NetworkEventEvaluator', expected: { url: '__GITLAB__/x' } }] },
      tasks[2]!.verified,
    ];
    const report = parseTasksReport(raw);
    assert.equal(report.tasks.length, 1);
    assert.deepEqual(
      report.problems.map((p) => p.message),
      [`task ${tasks[0]!.task_id}: start_urls: Too small: expected array to have >=1 items`, `task ${tasks[1]!.task_id}: eval: expected exactly one AgentResponseEvaluator, found 0`],
    );
  });

  for (const id of [107, 108]) {
    it(`scores demo task ${id} as its eval_result.json does`, async () => {
      const expected = taskEvalResultSchema.parse(JSON.parse(await readFile(join(DEMO, String(id), 'eval_result.json'), 'utf8')));
      const answer = await readFile(join(DEMO, String(id), 'agent_response.json'), 'utf8');
      const task = tasks.find((t) => t.task_id === id)!;
      const { score, details } = await scoreVerified(task, SITES, answer, { network });
      assert.equal(score, expected.score);
      assert.equal(details.status, expected.status);
      assert.equal(details.evaluators, expected.evaluators_results.map((r) => `${r.evaluator_name}: ${r.status}`).join('; '));
      const result = await (await sharedVerifiedEvaluator()).evaluate({ task: task.verified, response: JSON.parse(answer), entries: network, sites: SITES });
      assert.deepEqual(
        result.evaluators_results.map((r) => [r.evaluator_name, r.status, r.score, (r.assertions ?? []).map((a) => a.assertion_name)]),
        expected.evaluators_results.map((r) => [r.evaluator_name, r.status, r.score, (r.assertions ?? []).map((a) => a.assertion_name)]),
      );
    });
  }

  it('fails a wrong variant of each demo, and a message that is not JSON with its reason', async () => {
    const task = (id: number) => tasks.find((t) => t.task_id === id)!;
    // 107 answered as it should be, one count off.
    const wrong107 = { task_type: 'RETRIEVE', status: 'SUCCESS', retrieved_data: [8, 13, 9, 8, 10, 4, 5, 11].map((count, i) => ({ month: ['May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'][i], count })), error_details: null };
    const failed107 = await scoreVerified(task(107), SITES, JSON.stringify(wrong107), { network });
    assert.equal(failed107.score, 0);
    assert.equal(failed107.details.status, 'failure');
    // The same months with the right counts pass: the variant fails on the count alone.
    wrong107.retrieved_data[7]!.count = 10;
    assert.equal((await scoreVerified(task(107), SITES, JSON.stringify(wrong107), { network })).score, 1);
    // 108 reporting a status that is not success.
    const wrong108 = JSON.parse(await readFile(join(DEMO, '108', 'agent_response.json'), 'utf8')) as Record<string, unknown>;
    const failed108 = await scoreVerified(task(108), SITES, JSON.stringify({ ...wrong108, status: 'NOT_FOUND_ERROR' }), { network });
    assert.equal(failed108.score, 0);
    const prose = await scoreVerified(task(108), SITES, 'the counts are 12, 7, 5, 9 and 5', { network });
    assert.equal(prose.score, 0);
    assert.match(String(prose.details.response_problem), /not JSON/);
    const silent = await scoreVerified(task(108), SITES, null, {});
    assert.equal(silent.score, 0);
    assert.match(String(silent.details.response_problem), /without exit/);
  });
});
