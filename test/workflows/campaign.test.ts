/**
 * Unit tests of the campaign workflow: the real workflow code on a Temporal dev server (the project's
 * `temporal` binary, its search attributes and a namespace registered at start), every activity a stub
 * from ./stubActivities. Seconds per test, where a full-stack campaign takes minutes.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Context } from '@temporalio/activity';
import { WorkflowUpdateFailedError, type WorkflowHandle, type WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { ensureTemporal } from '../../infra/tools';
import { workflowBundle } from '../../workers/factory';
import { WORKFLOWS_PATH } from '../../workers/run';
import {
  campaignWorkflow,
  pauseSignal,
  progressQuery,
  resumeSignal,
  retryPhaseUpdate,
  stopAfterPhaseSignal,
  updateSettingsUpdate,
  type CampaignWorkflowInput,
} from '../../workflows/campaign';
import type { CampaignProgress, PhaseSettings } from '../../workflows/campaignTypes';
import { CAMPAIGN_SEARCH_ATTRIBUTES } from '../../temporal/searchAttributes';
import { dataset, model, permanentError, stubActivities, type StubActivities } from './stubActivities';

const NAMESPACE = 'webrl-workflow-tests';

const SETTINGS: PhaseSettings = {
  tasksPerPhase: 4,
  candidateFactor: 2,
  criticBand: [0.1, 0.9],
  rolloutShardSize: 2,
  rolloutShardsInFlight: 2,
  temperature: 1,
  curriculum: true,
  replayRankBand: [0.5, 0.95],
  replayCap: 2,
};

let env: TestWorkflowEnvironment;
let bundle: Awaited<ReturnType<typeof workflowBundle>>;
let campaigns = 0;

/** A promise a test resolves when it lets a held activity go on. */
function gate(): { wait: Promise<void>; open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => (open = resolve));
  return { wait, open };
}

/**
 * Starts a campaign on a worker of its own (its own task queue, so each test's stubs answer only its
 * campaign) and runs `body` while the worker runs.
 */
async function withCampaign<T>(
  stubs: StubActivities,
  overrides: Partial<CampaignWorkflowInput>,
  body: (handle: WorkflowHandleWithFirstExecutionRunId<typeof campaignWorkflow>) => Promise<T>,
): Promise<T> {
  const campaignId = `campaign-${++campaigns}`;
  const taskQueue = `workflow-tests-${campaigns}`;
  const worker = await Worker.create({
    connection: env.nativeConnection,
    namespace: NAMESPACE,
    taskQueue,
    workflowBundle: bundle,
    activities: stubs.activities,
    // Heartbeats reach the server at once, so a cancelled activity learns of it within a beat.
    maxHeartbeatThrottleInterval: '50 milliseconds',
  });
  const input: CampaignWorkflowInput = {
    campaignId,
    configKey: `campaigns/${campaignId}/config.json`,
    configSha256: 'sha256-config',
    seed: 7,
    phases: 0,
    settings: SETTINGS,
    nextPhase: 0,
    history: [],
    paused: false,
    stopAfterPhase: false,
    taskQueues: { control: taskQueue, browser: taskQueue, train: taskQueue },
    ...overrides,
  };
  return worker.runUntil(async () => {
    const handle = await env.client.workflow.start(campaignWorkflow, { taskQueue, workflowId: campaignId, args: [input] });
    return body(handle);
  });
}

/** Polls `probe` until `ready` holds (the workflow moves on its own; tests only watch). */
async function when<T>(probe: () => Promise<T>, ready: (value: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const value = await probe();
    if (ready(value)) return value;
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}; last seen: ${JSON.stringify(value).slice(0, 2000)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function progressWhen(
  handle: WorkflowHandle<typeof campaignWorkflow>,
  ready: (progress: CampaignProgress) => boolean,
  what: string,
): Promise<CampaignProgress> {
  return when(() => handle.query(progressQuery), ready, what);
}

async function rejectedUpdate(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => assert.fail('the update was accepted'),
    (error: unknown) => error,
  );
  assert.ok(error instanceof WorkflowUpdateFailedError, `expected a rejected update, got ${String(error)}`);
  return error.cause?.message ?? '';
}

describe('campaign workflow (stub activities on a dev server)', { timeout: 110_000 }, () => {
  before(async () => {
    // SDK errors are shown; the workflow's own logs are not (the failures it logs are the tests' own,
    // asserted through the progress query).
    Runtime.install({
      logger: new DefaultLogger('ERROR', (entry) => {
        if (entry.meta?.sdkComponent !== 'workflow') console.error(entry.level, entry.message, entry.meta ?? '');
      }),
    });
    const temporal = await ensureTemporal();
    env = await TestWorkflowEnvironment.createLocal({
      server: {
        executable: { type: 'existing-path', path: temporal.path },
        namespace: NAMESPACE,
        searchAttributes: CAMPAIGN_SEARCH_ATTRIBUTES,
      },
    });
    bundle = await workflowBundle(WORKFLOWS_PATH);
  });

  after(async () => {
    await env?.teardown();
  });

  test('continue-as-new hands the next phase the models, failed tasks and replay buffer it ends with', async () => {
    const stubs = stubActivities();
    await withCampaign(stubs, { phases: 1 }, async (handle) => {
      const result = await handle.result();
      assert.equal(result.status, 'completed');
      assert.equal(result.phase, 1);
      assert.deepEqual(
        result.history.map((summary) => [summary.phase, summary.manifestKey]),
        [
          [0, 'campaigns/test/phase-0/manifest.json'],
          [1, 'campaigns/test/phase-1/manifest.json'],
        ],
      );
      const latest = await handle.describe();
      assert.notEqual(latest.runId, handle.firstExecutionRunId, 'phase 1 ran in a new run');
    });

    const inPhase1 = (name: Parameters<StubActivities['inputs']>[0]) => stubs.inputs(name).filter((input) => input.phase === 1);
    const [generate] = inPhase1('generateTasks');
    assert.deepEqual(generate?.failedTasks, dataset(0, 'failed-tasks', 2));
    assert.equal(generate?.count, SETTINGS.tasksPerPhase * SETTINGS.candidateFactor);
    assert.equal(generate?.configKey, 'campaigns/campaign-1/config.json');
    assert.equal(generate?.configSha256, 'sha256-config');
    assert.equal(generate?.seed, 7);
    assert.equal(inPhase1('filterTasksByCritic')[0]?.critic, model(0, 'critic-fitted'), "phase 0's probe-fitted critic filters phase 1's tasks");
    assert.deepEqual(
      inPhase1('runRolloutShard')
        .filter((input) => input.purpose === 'train')
        .map((input) => input.actor),
      [model(0, 'actor'), model(0, 'actor')],
    );
    assert.equal(inPhase1('scoreWithOrm')[0]?.orm, model(0, 'orm-fitted'));
    assert.deepEqual(inPhase1('filterExperience')[0]?.replayBuffer, dataset(0, 'replay-buffer', 5));
    assert.equal(inPhase1('trainCritic')[0]?.critic, model(0, 'critic-fitted'));
    assert.deepEqual(
      [inPhase1('trainActor')[0]?.actor, inPhase1('trainActor')[0]?.critic],
      [model(0, 'actor'), model(1, 'critic')],
      'the previous actor is the reference; the critic is the one trained this phase',
    );
    assert.deepEqual(inPhase1('publishPhase')[0]?.carry, {
      models: { actor: model(1, 'actor'), critic: model(1, 'critic'), orm: model(0, 'orm-fitted') },
      failedTasks: dataset(1, 'failed-tasks', 2),
      replayBuffer: dataset(1, 'replay-buffer', 5),
    });
    assert.equal(stubs.inputs('collectDemonstrations').length, 1, 'demonstrations are phase 0 only');
  });

  test('a permanently failed activity waits for an operator, and retryPhase reruns the phase', async () => {
    const stubs = stubActivities({
      scoreWithOrm: (_input, attempt) => {
        if (attempt === 1) throw permanentError('rewards bucket refused the write');
      },
    });
    await withCampaign(stubs, {}, async (handle) => {
      const waiting = await progressWhen(handle, (p) => p.status === 'waiting-for-operator', 'the phase to fail');
      assert.deepEqual(waiting.failure, { phase: 0, activity: 'scoreWithOrm', message: 'rewards bucket refused the write', type: 'StoragePermanentError' });
      assert.equal(stubs.inputs('scoreWithOrm').length, 1, 'a permanent error is not retried');

      assert.equal(await handle.executeUpdate(retryPhaseUpdate), 0);
      const result = await handle.result();
      assert.equal(result.status, 'completed');
      assert.equal(result.failure, null);
      assert.deepEqual(
        result.history.map((summary) => summary.phase),
        [0],
      );
    });
    assert.equal(stubs.inputs('collectDemonstrations').length, 2, 'the retried phase starts over');
    assert.equal(stubs.inputs('scoreWithOrm').length, 2);
  });

  test('pause holds the next activity until resume; retryPhase is refused while nothing failed', async () => {
    const demonstrations = gate();
    const stubs = stubActivities({ collectDemonstrations: () => demonstrations.wait });
    await withCampaign(stubs, {}, async (handle) => {
      await progressWhen(handle, (p) => p.activity === 'collectDemonstrations', 'demonstrations to start');
      await handle.signal(pauseSignal);
      await progressWhen(handle, (p) => p.status === 'paused', 'the pause');
      assert.match(await rejectedUpdate(handle.executeUpdate(retryPhaseUpdate)), /phase 0 has not failed \(status: paused\)/);

      demonstrations.open();
      const held = await progressWhen(handle, (p) => p.counts.demonstrations === 6, 'demonstrations to finish');
      assert.equal(held.status, 'paused');
      assert.equal(held.activity, null);
      // The workflow task that took the demonstrations' result in has completed: any activity it would
      // have scheduled is in the history by now, recorded with that completion.
      const events = await when(
        async () => (await handle.fetchHistory()).events ?? [],
        (events) => {
          const done = events.findIndex((event) => event.activityTaskCompletedEventAttributes);
          return done >= 0 && events.slice(done).some((event) => event.workflowTaskCompletedEventAttributes);
        },
        "the workflow task that took the demonstrations' result",
      );
      const scheduled = events.flatMap((event) => event.activityTaskScheduledEventAttributes?.activityType?.name ?? []);
      assert.deepEqual(scheduled, ['collectDemonstrations'], 'no activity is scheduled while paused');
      assert.equal(stubs.inputs('trainSft').length, 0);

      await handle.signal(resumeSignal);
      const result = await handle.result();
      assert.equal(result.status, 'completed');
    });
    assert.equal(stubs.inputs('trainSft').length, 1);
  });

  test('updateSettings: invalid changes are rejected, a valid one applies from the next phase', async () => {
    const demonstrations = gate();
    const stubs = stubActivities({ collectDemonstrations: () => demonstrations.wait });
    await withCampaign(stubs, { phases: 1 }, async (handle) => {
      await progressWhen(handle, (p) => p.activity === 'collectDemonstrations', 'demonstrations to start');
      assert.match(await rejectedUpdate(handle.executeUpdate(updateSettingsUpdate, { args: [{ rolloutShardSize: 0 }] })), /^rolloutShardSize: /);
      assert.match(
        await rejectedUpdate(handle.executeUpdate(updateSettingsUpdate, { args: [{ shardSize: 3 } as Partial<PhaseSettings>] })),
        /^unknown phase setting\(s\): shardSize$/,
      );
      const merged = await handle.executeUpdate(updateSettingsUpdate, { args: [{ tasksPerPhase: 3, temperature: 0.5 }] });
      assert.deepEqual(merged, { ...SETTINGS, tasksPerPhase: 3, temperature: 0.5 });
      const pending = await handle.query(progressQuery);
      assert.deepEqual(pending.pendingSettings, { tasksPerPhase: 3, temperature: 0.5 });
      assert.deepEqual(pending.settings, SETTINGS, 'the running phase keeps its settings');

      demonstrations.open();
      const result = await handle.result();
      assert.equal(result.status, 'completed');
      assert.deepEqual(result.settings, { ...SETTINGS, tasksPerPhase: 3, temperature: 0.5 });
      assert.equal(result.pendingSettings, null);

      // Rejected updates leave no trace in the history; the accepted one does.
      const history = await env.client.workflow.getHandle(handle.workflowId, handle.firstExecutionRunId).fetchHistory();
      assert.equal(history.events?.filter((event) => event.workflowExecutionUpdateAcceptedEventAttributes).length, 1);
    });
    assert.deepEqual(
      stubs.inputs('generateTasks').map((input) => [input.phase, input.count]),
      [
        [0, 4],
        [1, 3 * SETTINGS.candidateFactor],
      ],
    );
    const temperatures = stubs
      .inputs('runRolloutShard')
      .filter((input) => input.purpose !== 'eval')
      .map((input) => [input.phase, input.temperature]);
    assert.deepEqual(temperatures, [
      [0, 1],
      [0, 1],
      [1, 0.5],
      [1, 0.5],
    ]);
  });

  test('stopAfterPhase ends the campaign when the phase is published, without continuing as new', async () => {
    const demonstrations = gate();
    const stubs = stubActivities({ collectDemonstrations: () => demonstrations.wait });
    await withCampaign(stubs, { phases: 3 }, async (handle) => {
      await progressWhen(handle, (p) => p.activity === 'collectDemonstrations', 'demonstrations to start');
      await handle.signal(stopAfterPhaseSignal);
      demonstrations.open();
      const result = await handle.result();
      assert.equal(result.status, 'stopped');
      assert.equal(result.phase, 0);
      assert.deepEqual(
        result.history.map((summary) => summary.phase),
        [0],
      );
      assert.equal((await handle.describe()).runId, handle.firstExecutionRunId);
    });
    assert.equal(stubs.inputs('publishPhase').length, 1, 'the phase itself runs to the end');
    assert.ok(stubs.calls.every((call) => call.input.phase === 0));
  });

  test('a failed rollout shard cancels the shards in flight and waits for them before the phase fails', async () => {
    const siblingsStarted = gate();
    let started = 0;
    const cancelled: number[] = [];
    const stubs = stubActivities({
      runRolloutShard: async (input) => {
        if (input.shard === 0) {
          await siblingsStarted.wait;
          throw permanentError('shard 0: the trace store refused the write');
        }
        if (++started === 2) siblingsStarted.open();
        const context = Context.current();
        const beat = setInterval(() => context.heartbeat(), 20);
        try {
          await context.cancelled;
        } catch (error) {
          cancelled.push(input.shard as number);
          throw error;
        } finally {
          clearInterval(beat);
        }
      },
    });
    const settings = { ...SETTINGS, tasksPerPhase: 8, rolloutShardSize: 1, rolloutShardsInFlight: 3 };
    await withCampaign(stubs, { settings }, async (handle) => {
      const waiting = await progressWhen(handle, (p) => p.status === 'waiting-for-operator', 'the phase to fail');
      assert.deepEqual(waiting.failure, {
        phase: 0,
        activity: 'runRolloutShard',
        message: 'shard 0: the trace store refused the write',
        type: 'StoragePermanentError',
      });
      assert.deepEqual(cancelled.sort(), [1, 2], 'both siblings were cancelled, and had stopped, before the phase failed');
      const shards = stubs.inputs('runRolloutShard').map((input) => input.shard as number);
      assert.deepEqual(shards.sort(), [0, 1, 2], 'no shard starts after one failed');
      assert.equal(stubs.inputs('scoreWithOrm').length, 0);

      await handle.signal(stopAfterPhaseSignal);
      const result = await handle.result();
      assert.equal(result.status, 'stopped');
      assert.deepEqual(result.history, []);
    });
  });
});
