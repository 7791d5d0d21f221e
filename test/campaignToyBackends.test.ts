/**
 * A new benchmark and a new model backend, each one folder plus one registry line, run a campaign
 * phase on the real stack (Temporal, MinIO, Chromium, the three workers in this process): the toy
 * environment (test/fixtures/toyEnvironmentBackend: pages of coloured buttons, its own task payload and
 * evaluation format) and the toy critic (test/fixtures/toyModelBackend), with the embedded actor, ORM
 * and trainer. Nothing outside the two folders names them.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@temporalio/client';
import { parseConfig } from '../config/load';
import type { Config } from '../config/campaignConfig';
import { registerEnvironmentBackend } from '../env/backends/registry';
import { registerModelBackend } from '../models/backends/registry';
import { phaseKey } from '../storage/keys';
import { toyEnvironmentBackend, type ToyTask } from './fixtures/toyEnvironmentBackend';
import { toyModelBackend } from './fixtures/toyModelBackend';
import { runCampaignToEnd, tinyCampaignConfig } from './harness/campaign';
import { startTestStack, type TestStack } from './harness/stack';

// One line each: configs below may name them (campaign.environment.backend: toy, models.critic.backend: toy).
registerEnvironmentBackend(toyEnvironmentBackend);
registerModelBackend(toyModelBackend);

const NAME = 'toy-backends';
const FAVOURITE = 'Click the green button.';

describe('a toy environment backend and a toy model backend', () => {
  let stack: TestStack;
  let client: Client;
  let config: Config;

  before(async () => {
    stack = await startTestStack();
    client = await stack.client();
    const base = await tinyCampaignConfig(stack, NAME, { phases: 1 });
    config = parseConfig({
      ...base,
      campaign: {
        ...base.campaign,
        // Every train task is a candidate; the critic band keeps the ones the toy critic values at 0.5.
        phase: { ...base.campaign.phase, curriculum: false, tasksPerPhase: 2, candidateFactor: 3, criticBand: [0.05, 0.75] },
        environment: { backend: 'toy', testTasks: 0, demonstrationTasks: 0, maxSteps: 3, episodeDeadlineSeconds: 60, screenshotRate: 0 },
      },
      models: { ...base.models, critic: { backend: 'toy', favourite: FAVOURITE } },
    });
  });
  after(() => stack?.stop());

  test('a campaign phase runs on them: demonstrations, rollouts and evaluation on the toy pages, the critic filter by the toy critic', async () => {
    await runCampaignToEnd(stack, client, config, async ({ final, store, manifests, records, readJsonl }) => {
      assert.equal(final.status, 'completed', JSON.stringify(final.failure));
      assert.deepEqual(
        manifests.map((m) => m.data.phase),
        [0, 1],
      );

      // Every episode ran on a toy page and was scored by it; a click on a button ends the episode there.
      const oracle = records.filter((r) => r.key.includes('/phase-0/demonstrations/oracle/'));
      assert.equal(oracle.length, 6, 'phase 0 demonstrated every train task');
      for (const { key, record } of oracle) {
        assert.equal(record.score, 1, `${key}: the oracle's click did not solve the page: ${record.reason}`);
        assert.deepEqual([record.steps, record.reason], [1, 'environment_ended'], key);
      }
      for (const { key, record } of records) {
        assert.equal(record.site, 'toy', key);
        assert.ok(record.graded, `${key} had no evaluator`);
        const clicked = record.evaluation?.clicked ?? null;
        assert.equal(record.reason === 'environment_ended', clicked !== null, `${key}: ${record.reason} with ${String(clicked)} clicked`);
        assert.equal(record.score, clicked === record.intent.split(' ')[2] ? 1 : 0, `${key}: ${JSON.stringify(record.evaluation)}`);
      }

      // Phase 1's critic filter: the toy critic valued all six candidates and the band kept the green ones, which were rolled out.
      const tasks = phaseKey(NAME, 1, 'tasks');
      const values = await store.getJson<{ taskId: string; value: number }[]>(`${tasks}/critic-values.json`);
      assert.equal(values.length, 6);
      const kept = await readJsonl<ToyTask>(`${tasks}/kept.jsonl`);
      assert.deepEqual(
        kept.map((t) => t.intent),
        [FAVOURITE, FAVOURITE],
      );
      assert.ok(kept.every((t) => t.colour === 'green' && t.sites[0] === 'toy'));
      const rolledOut = new Set(records.filter((r) => r.key.includes('/phase-1/rollouts/train/')).map((r) => r.record.taskId));
      assert.deepEqual([...rolledOut].sort(), kept.map((t) => String(t.task_id)).sort());
    });
  });
});
