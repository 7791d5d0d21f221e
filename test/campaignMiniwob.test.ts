/**
 * A campaign on MiniWoB++ on the real stack (Temporal, MinIO, the three workers in this process), with
 * the embedded actor: SFT on the oracle plans' demonstrations, then one curriculum phase whose tasks the
 * miniwob backend's `evolve` draws from the train split, weighted by the task types the SFT actor failed.
 * Every episode is scored by its page's own reward.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@temporalio/client';
import { parseConfig } from '../config/load';
import type { Config } from '../config/campaignConfig';
import type { EnvironmentTask } from '../env/backends/contract';
import { miniwobSplit } from '../env/backends/miniwob';
import { miniwobRefOf } from '../env/backends/miniwob/evolve';
import { ORACLE_TASK_TYPES } from '../env/backends/miniwob/oracle';
import { miniwobSettings } from '../env/backends/miniwob/settings';
import { phaseKey } from '../storage/keys';
import { runCampaignToEnd, tinyCampaignConfig } from './harness/campaign';
import { startTestStack, type TestStack } from './harness/stack';

const NAME = 'miniwob-curriculum';
/** Four types with oracle plans (phase 0 demonstrates them); every listed type has one now. */
const TYPES = ['click-button', 'click-link', 'enter-text', 'focus-text'];
const MINIWOB = { taskTypes: TYPES, seeds: { train: { from: 0, to: 4 }, test: { from: 1000, to: 1001 } }, timeLimit: 60 };

describe('a campaign on MiniWoB++', () => {
  let stack: TestStack;
  let client: Client;
  let config: Config;

  before(async () => {
    stack = await startTestStack();
    client = await stack.client();
    const base = await tinyCampaignConfig(stack, NAME, { phases: 1 });
    const { testTasks, demonstrationTasks, maxSteps, episodeDeadlineSeconds } = base.campaign.environment;
    config = parseConfig({
      ...base,
      campaign: {
        ...base.campaign,
        phase: { ...base.campaign.phase, curriculum: true, tasksPerPhase: 4, candidateFactor: 2 },
        environment: { backend: 'miniwob', miniwob: MINIWOB, testTasks, demonstrationTasks, maxSteps, episodeDeadlineSeconds, screenshotRate: 0 },
      },
    });
  });
  after(() => stack?.stop());

  test('SFT on oracle demonstrations, then a curriculum phase drawn from the failed task types, every score the page reward', async () => {
    assert.ok(
      TYPES.every((t) => ORACLE_TASK_TYPES.includes(t)),
      'the types have oracle plans',
    );
    await runCampaignToEnd(stack, client, config, async ({ final, manifests, records, readJsonl }) => {
      assert.equal(final.status, 'completed', JSON.stringify(final.failure));
      assert.deepEqual(
        final.history.map((h) => h.phase),
        [0, 1],
      );
      assert.deepEqual(
        manifests.map((m) => m.data.phase),
        [0, 1],
      );

      // Phase 0's demonstrations: oracle episodes, all on types with an oracle plan, each solved by the page's reward.
      const train = await miniwobSplit(miniwobSettings.parse({ backend: 'miniwob', miniwob: MINIWOB }), 'train');
      const trainById = new Map(train.map((t) => [t.task_id, t]));
      const oracle = records.filter((r) => r.key.includes('/phase-0/demonstrations/oracle/'));
      assert.ok(oracle.length > 0, 'phase 0 ran oracle demonstrations');
      for (const { record } of oracle) {
        const task = trainById.get(record.taskId);
        assert.ok(task?.oracle?.length, `${record.taskId} was demonstrated without an oracle plan`);
        assert.ok(ORACLE_TASK_TYPES.includes(miniwobRefOf(task)!.type));
        assert.equal(record.score, 1, `the oracle plan of ${record.taskId} did not solve its page: ${record.reason}`);
      }
      assert.ok((await readJsonl(phaseKey(NAME, 0, 'demonstrations', 'actor-sft.jsonl'))).length > 0, 'SFT had demonstrations');

      // Every episode of the campaign was graded by its MiniWoB++ page: the page's raw reward is in the
      // record, and the score is 1 exactly when it is positive.
      assert.ok(records.length > oracle.length);
      for (const { key, record } of records) {
        assert.equal(record.site, 'miniwob', key);
        assert.ok(record.graded, `${key} had no evaluator`);
        const raw = record.evaluation?.rawReward;
        assert.ok(raw === null || typeof raw === 'number', `${key}: no raw reward in ${JSON.stringify(record.evaluation)}`);
        assert.equal(record.score, typeof raw === 'number' && raw > 0 ? 1 : 0, `${key} scored ${record.score} with raw reward ${raw}`);
      }

      // Phase 1's candidates: train instances of the types phase 0's actor failed, in proportion to those failures.
      const failed = await readJsonl<EnvironmentTask>(manifests[0]!.data.carry.failedTasks.key);
      assert.ok(failed.length > 0, 'the SFT actor failed some probe tasks');
      const failedTypes = new Map<string, number>();
      for (const task of failed) failedTypes.set(miniwobRefOf(task)!.type, (failedTypes.get(miniwobRefOf(task)!.type) ?? 0) + 1);
      const candidates = await readJsonl<EnvironmentTask>(phaseKey(NAME, 1, 'tasks', 'candidates.jsonl'));
      const evolved = candidates.filter((t) => t.evolved_from !== undefined);
      assert.ok(evolved.length > 0, 'phase 1 drew tasks through the backend evolve');
      for (const task of evolved) {
        const ref = miniwobRefOf(task)!;
        assert.ok(failedTypes.has(ref.type), `${String(task.evolved_from)} is of a type the actor did not fail (${[...failedTypes.keys()].join(', ')})`);
        assert.ok(ref.seed >= MINIWOB.seeds.train.from && ref.seed < MINIWOB.seeds.train.to, `seed ${ref.seed} is not a train seed`);
        assert.equal(task.intent, trainById.get(String(task.evolved_from))!.intent, 'the intent read from the seeded page');
      }
    });
  });
});
