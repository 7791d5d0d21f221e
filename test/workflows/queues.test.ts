/**
 * Each task queue's proxy in the workflow is typed with that queue's activities only
 * (activities/campaign/contract.ts): calling a train activity on the control proxy does not compile.
 * The workers register, per queue, exactly that queue's activities, and no activity on two queues.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { proxyActivities } from '@temporalio/workflow';
import type { QueueActivities } from '../../activities/campaign/contract';
import { CampaignContext } from '../../activities/campaign/context';
import { workerRoles } from '../harness/roles';
import { ArtifactStore } from '../../storage/artifactStore';
import { ALL_QUEUES, QUEUE_ACTIVITIES } from '../../workers/run';

type Proxy<Q extends keyof QueueActivities> = ReturnType<typeof proxyActivities<QueueActivities[Q]>>;

test('a train activity on the control proxy is a type error', () => {
  const onControl = (control: Proxy<'control'>, train: Proxy<'train'>) => {
    // @ts-expect-error trainActor is served by the train queue; the control proxy does not have it
    void control.trainActor;
    // @ts-expect-error runRolloutShard is served by the browser queue
    void train.runRolloutShard;
    return [control.publishPhase, train.trainActor];
  };
  assert.equal(typeof onControl, 'function');
});

test('the workers register each queue’s activities, none on two queues', () => {
  // Built, never called: no request reaches this endpoint.
  const store = new ArtifactStore({ endpoint: 'http://127.0.0.1:1', region: 'us-east-1', bucket: 'b', prefix: '', forcePathStyle: true, maxAttempts: 1 });
  const ctx = new CampaignContext(store, '/nonexistent');
  const names = Object.fromEntries(
    ALL_QUEUES.map((queue) => [queue, Object.keys(QUEUE_ACTIVITIES[queue]({ store, ctx, roles: workerRoles(ctx), runtime: undefined })).sort()]),
  );
  assert.deepEqual(names.browser, ['collectDemonstrations', 'filterTasksByCritic', 'prepareEnvironment', 'runRolloutShard']);
  assert.deepEqual(names.train, ['deployModels', 'filterExperience', 'fitOrmAndCriticToProbe', 'scoreWithOrm', 'trainActor', 'trainCritic', 'trainSft']);
  for (const name of ['evaluationTasks', 'generateTasks', 'publishPhase', 'summarizeEvaluation']) assert.ok(names.control!.includes(name), name);
  const all = Object.values(names).flat();
  assert.equal(new Set(all).size, all.length, 'no activity on two queues');
  store.destroy();
});
