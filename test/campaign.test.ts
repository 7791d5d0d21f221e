import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { ApplicationFailure } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { CampaignContext } from '../activities/campaign/context';
import { createTrainActivities } from '../activities/campaign/trainActivities';
import { createDeployActivities } from '../activities/campaign/deployActivities';
import { campaignWorkflowId, parseForkPoint, pauseCampaign, resumeCampaign, startCampaign } from '../campaign/control';
import { parseConfig } from '../config/load';
import { readPhaseManifests } from '../campaign/manifest';
import type { Config } from '../config/campaignConfig';
import { exited } from '../infra/processes';
import { ArtifactStore } from '../storage/artifactStore';
import { manifestKey, phaseKey } from '../storage/keys';
import { connectWorker } from '../temporal/connection';
import { createWorker } from '../workers/factory';
import { runWorkers } from '../workers/run';
import { progressQuery, type CampaignWorkflowInput } from '../workflows/campaign';
import type { CampaignProgress } from '../workflows/campaignTypes';
import { assertManifestsEqualBesideConfig, campaignVariant, tinyCampaignConfig } from './harness/campaign';
import { startTestStack, type TestStack } from './harness/stack';
import { workerRoles } from './harness/roles';
import { killWorkerMidway, startWorkerProcess, waitFor, writeConfigFile } from './harness/workerProcess';
import { recordHistories } from './harness/histories';
import { startCpuBurner } from './harness/cpuBurner';

const execFileAsync = promisify(execFile);
const WEBRL = fileURLToPath(new URL('../bin/webrl.js', import.meta.url));

interface RunHistory {
  runId: string;
  phase: number;
  events: Array<Record<string, unknown>>;
}

/** Every run of the campaign started since `since` (one per phase after continue-as-new), with its history. */
async function campaignHistories(client: Client, name: string, since: Date): Promise<RunHistory[]> {
  const runs: RunHistory[] = [];
  const query = `WorkflowId = '${campaignWorkflowId(name)}' AND StartTime >= '${since.toISOString()}'`;
  for await (const execution of client.workflow.list({ query })) {
    const history = await client.workflow.getHandle(execution.workflowId, execution.runId).fetchHistory();
    const events = (history.events ?? []) as Array<Record<string, unknown>>;
    const started = events[0]?.workflowExecutionStartedEventAttributes as { input?: { payloads?: Array<{ data?: Uint8Array }> } };
    const input = JSON.parse(Buffer.from(started.input!.payloads![0]!.data!).toString()) as { nextPhase: number };
    runs.push({ runId: execution.runId, phase: input.nextPhase, events });
  }
  return runs.sort((a, b) => a.phase - b.phase);
}

/** Activity type -> start attempts, for one run's history. */
function activityStarts(run: RunHistory): Map<string, number[]> {
  const scheduled = new Map<string, string>();
  const starts = new Map<string, number[]>();
  for (const event of run.events) {
    const attrs = event.activityTaskScheduledEventAttributes as { activityType?: { name?: string } } | undefined;
    if (attrs) scheduled.set(String(event.eventId), attrs.activityType!.name!);
    const begun = event.activityTaskStartedEventAttributes as { scheduledEventId?: unknown; attempt?: number } | undefined;
    if (begun) {
      const type = scheduled.get(String(begun.scheduledEventId))!;
      starts.set(type, [...(starts.get(type) ?? []), begun.attempt ?? 1]);
    }
  }
  return starts;
}

/** The campaign both tests run: the retry test under one prefix, the crash test under another. */
const NAME = 'twin';

describe('the durable campaign on the real stack', () => {
  let stack: TestStack;
  let client: Client;
  let base: Config;

  before(async () => {
    stack = await startTestStack();
    client = await stack.client();
    base = await tinyCampaignConfig(stack, NAME, { phases: 2 });
  });
  after(() => stack?.stop());

  test('a permanent failure in phase 2 training waits for an operator; retry-phase completes it; phases 0 and 1 ran once', async () => {
    const config = campaignVariant(base, { prefix: 'uninterrupted/' });
    const configFile = await writeConfigFile(stack, config, 'uninterrupted');
    const settings = { config, secrets: stack.secrets };
    const since = new Date();
    const stop = new AbortController();
    const others = runWorkers(settings, ['control', 'browser'], stop.signal);
    // The train worker is composed here so that one activity can carry an injected fault.
    const fault = { on: true };
    const store = new ArtifactStore(config.s3, stack.secrets.s3);
    const ctx = new CampaignContext(store, join(stack.dir, 'work-retry'));
    const trainActivities = createTrainActivities({ ctx, roles: workerRoles(ctx) });
    const connection = await connectWorker(config, stack.secrets);
    const trainWorker = await createWorker({
      connection,
      config,
      taskQueue: config.temporal.taskQueues.train,
      activities: {
        ...trainActivities,
        ...createDeployActivities({ ctx, roles: workerRoles(ctx) }),
        async trainActor(input: Parameters<typeof trainActivities.trainActor>[0]) {
          if (fault.on && input.phase === 2) throw ApplicationFailure.nonRetryable('injected fault: the trainer rejected its data', 'InjectedFault');
          return trainActivities.trainActor(input);
        },
      },
    });
    const training = trainWorker.run();
    try {
      const handle = await startCampaign(client, store, config);
      const waiting = await waitFor('the campaign to wait for an operator', async () => {
        const progress = await client.workflow.getHandle(handle.workflowId).query(progressQuery);
        return progress.status === 'waiting-for-operator' ? progress : undefined;
      });
      assert.equal(waiting.failure?.phase, 2);
      assert.equal(waiting.failure?.activity, 'trainActor');
      assert.match(waiting.failure?.message ?? '', /injected fault/);
      const description = await client.workflow.getHandle(handle.workflowId).describe();
      assert.equal(description.status.name, 'RUNNING', 'a failed phase leaves the campaign running, not terminated');
      assert.deepEqual(description.searchAttributes.Status, ['waiting-for-operator']);

      fault.on = false;
      const retried = await execFileAsync(process.execPath, [WEBRL, 'campaign', 'retry-phase', '-c', configFile], {
        env: { ...process.env, ...stack.env },
      });
      assert.match(retried.stdout, new RegExp(`campaign ${NAME}: retrying phase 2`));
      const final = (await client.workflow.getHandle(handle.workflowId).result()) as CampaignProgress;
      assert.equal(final.status, 'completed');
      assert.deepEqual(
        final.history.map((h) => h.phase),
        [0, 1, 2],
      );

      const runs = await campaignHistories(client, NAME, since);
      assert.deepEqual(
        runs.map((r) => r.phase),
        [0, 1, 2],
        'one workflow run per phase',
      );
      for (const run of runs) {
        assert.ok(run.events.length < 10_000, `run of phase ${run.phase} has ${run.events.length} events`);
        if (run.phase > 1) continue;
        for (const [type, attempts] of activityStarts(run)) {
          // Rollout shards run once each; every other activity exactly once, each at its first attempt.
          assert.ok(
            attempts.every((a) => a === 1),
            `phase ${run.phase} ${type} was retried: ${attempts}`,
          );
          if (type !== 'runRolloutShard') assert.equal(attempts.length, 1, `phase ${run.phase} ${type} ran ${attempts.length} times`);
        }
      }
      const phase2 = activityStarts(runs[2]!);
      assert.equal(phase2.get('trainActor')?.length, 2, 'the failed training ran again after retry-phase');

      // The report: the per-phase table (with how often the ORM agreed with the evaluators) and the chart.
      const chart = join(stack.dir, 'report.svg');
      const report = await execFileAsync(process.execPath, [WEBRL, 'campaign', 'report', '-c', configFile, '-o', chart], {
        env: { ...process.env, ...stack.env },
      });
      const table = report.stdout.split('\n');
      assert.match(table[0]!, /phase\s+test success.*ORM = evaluator/);
      for (const phase of ['0 (SFT)', '1', '2']) {
        assert.ok(
          table.some((line) => line.trimStart().startsWith(`${phase} `) && /\d+\.\d%$/.test(line)),
          `no row for phase ${phase} in\n${report.stdout}`,
        );
      }
      assert.match(await readFile(chart, 'utf8'), /^<svg[^>]*>[\s\S]*<\/svg>\s*$/);
      if (process.env.WEBRL_RECORD_HISTORIES) await recordHistories(stack, NAME, runs, process.env.WEBRL_RECORD_HISTORIES);
    } finally {
      stop.abort();
      trainWorker.shutdown();
      await Promise.all([others, training]);
      await connection.close();
      store.destroy();
    }
  });

  test('SIGKILLs of the worker (in training, in rollouts) and of the Temporal server (between activities) lose nothing: manifests equal the uninterrupted run', async () => {
    const config = campaignVariant(base, { phases: 1, prefix: 'crashed/' });
    const configFile = await writeConfigFile(stack, config, 'crashed');
    const store = new ArtifactStore(config.s3, stack.secrets.s3);
    const reference = new ArtifactStore(campaignVariant(base, { prefix: 'uninterrupted/' }).s3, stack.secrets.s3);
    const key = (phase: number, ...parts: string[]) => phaseKey(NAME, phase, ...parts);
    const published = (dataKey: string) => store.exists(manifestKey(dataKey));
    const since = new Date();
    let worker = startWorkerProcess(stack, configFile, '1');
    try {
      const handle = await startCampaign(client, store, config);

      // 1. In phase 0's longest training (the ORM and the critic after the probe), after the ORM's first
      // training checkpoint is stored.
      await killWorkerMidway(
        worker,
        'the probe fit with a stored checkpoint',
        async () => (await store.exists(key(0, 'checkpoints', 'orm-probe-fit.train-state'))) && !(await published(key(0, 'checkpoints', 'probe-fit'))),
      );
      worker = startWorkerProcess(stack, configFile, '2');

      // 2. In phase 1's rollouts, after a shard has stored some but not all of its trajectories.
      await killWorkerMidway(worker, 'a rollout shard with a stored trajectory', async () => {
        for (let shard = 0; shard < 2; shard++) {
          const base = key(1, 'rollouts', 'train', `shard-${String(shard).padStart(4, '0')}`);
          let stored = 0;
          for await (const _ of store.list(`${base}/trajectories/`)) stored++;
          if (stored > 0 && !(await published(base))) return true;
        }
        return false;
      });
      worker = startWorkerProcess(stack, configFile, '3');

      // 3. The Temporal server, between activities: pause (the workflow finishes its activity and
      // waits before the next), kill and restart the server, resume.
      await pauseCampaign(client, NAME);
      await waitFor('the campaign to pause between activities', async () => {
        const progress = await handle.query(progressQuery);
        const description = await handle.describe();
        const pending = (description.raw.pendingActivities ?? []).length;
        return progress.status === 'paused' && progress.activity === null && pending === 0 ? true : undefined;
      });
      await stack.killTemporal();
      await stack.restartTemporal();
      await waitFor('the restarted server to answer', async () => (await handle.describe()).status.name === 'RUNNING' || undefined);
      await resumeCampaign(client, NAME);

      const final = (await waitFor('the campaign to complete', () => handle.result() as Promise<CampaignProgress>)) as CampaignProgress;
      assert.equal(final.status, 'completed');

      // The kills landed where intended: the interrupted activities ran again.
      const runs = await campaignHistories(client, NAME, since);
      assert.deepEqual(
        runs.map((r) => r.phase),
        [0, 1],
      );
      assert.ok(
        activityStarts(runs[0]!)
          .get('fitOrmAndCriticToProbe')!
          .some((a) => a > 1),
        'the probe fit was retried after the kill',
      );
      assert.ok(
        activityStarts(runs[1]!)
          .get('runRolloutShard')!
          .some((a) => a > 1),
        'a rollout shard was retried after the kill',
      );
      for (const run of runs) assert.ok(run.events.length < 10_000, `run of phase ${run.phase} has ${run.events.length} events`);

      // Nothing lost or duplicated: every phase manifest (references, counts, metrics, object
      // checksums) equals the uninterrupted run's, whose phases 0 and 1 the retry test produced.
      const crashed = await readPhaseManifests(store, NAME);
      const uninterrupted = (await readPhaseManifests(reference, NAME)).slice(0, 2);
      assert.equal(crashed.length, 2);
      assert.equal(uninterrupted.length, 2, 'the uninterrupted reference run (the retry test) is missing');
      // Each phase names its own campaign's frozen config (the two runs' configs differ only in their
      // storage prefix); everything else is equal.
      await assertManifestsEqualBesideConfig(NAME, { store, manifests: crashed }, { store: reference, manifests: uninterrupted });
    } finally {
      if (worker.exitCode === null && worker.signalCode === null) {
        process.kill(-worker.pid!, 'SIGKILL');
        await exited(worker);
      }
      store.destroy();
      reference.destroy();
    }
  });

  test('with every core taken by a CPU burner and a 5 s heartbeat timeout, phase 0 runs with no activity attempt failed', async () => {
    // Five seconds: the SDK sends heartbeats at most every 80% of the timeout, so this is about as short as it can safely be.
    const variant = campaignVariant(base, { phases: 0, prefix: 'loaded/' });
    const config = parseConfig({
      ...variant,
      campaign: { ...variant.campaign, name: 'loaded' },
      temporal: { ...variant.temporal, heartbeatTimeoutSeconds: 5 },
    });
    const since = new Date();
    const burner = startCpuBurner();
    const stop = new AbortController();
    const workers = runWorkers({ config, secrets: stack.secrets }, ['control', 'browser', 'train'], stop.signal);
    const store = new ArtifactStore(config.s3, stack.secrets.s3);
    try {
      const progress = (await (await startCampaign(client, store, config)).result()) as CampaignProgress;
      assert.equal(progress.status, 'completed');
      const runs = await campaignHistories(client, 'loaded', since);
      assert.equal(runs.length, 1);
      const retried = [...activityStarts(runs[0]!)].filter(([, attempts]) => attempts.some((attempt) => attempt > 1));
      assert.deepEqual(retried, [], 'every activity finished on its first attempt');
      const started = runs[0]!.events[0]!.workflowExecutionStartedEventAttributes as { input?: { payloads?: Array<{ data?: Uint8Array }> } };
      assert.equal((JSON.parse(Buffer.from(started.input!.payloads![0]!.data!).toString()) as CampaignWorkflowInput).heartbeatTimeoutSeconds, 5);
    } finally {
      await burner.stop();
      stop.abort();
      await workers;
      store.destroy();
    }
  });

  test("a campaign started --from another's published phase takes it over by reference and starts with the next phase", async () => {
    const source = campaignVariant(base, { prefix: 'uninterrupted/' });
    const config = parseConfig({ ...source, campaign: { ...source.campaign, name: 'twin-ablation', phase: { ...source.campaign.phase, curriculum: false } } });
    const store = new ArtifactStore(config.s3, stack.secrets.s3);
    try {
      await assert.rejects(startCampaign(client, store, config, { from: { campaign: NAME, phase: 2 } }), /phase 2 leaves nothing to run/);
      await assert.rejects(startCampaign(client, store, config, { from: { campaign: 'no-such-campaign', phase: 0 } }), /has not published phase 0/);
      assert.throws(() => parseForkPoint('twin'), /expected <campaign>:<phase>/);

      const handle = await startCampaign(client, store, config, { from: parseForkPoint(`${NAME}:1`) });
      const [original, taken] = await Promise.all([readPhaseManifests(store, NAME), readPhaseManifests(store, 'twin-ablation')]);
      assert.equal(taken.length, 2);
      for (const phase of [0, 1]) {
        // The same objects and numbers; only the owner and the manifest's own key differ.
        assert.deepEqual(taken[phase]!.objects, original[phase]!.objects);
        assert.deepEqual(taken[phase]!.data.carry, original[phase]!.data.carry);
        assert.deepEqual({ ...taken[phase]!.data.summary, manifestKey: '' }, { ...original[phase]!.data.summary, manifestKey: '' });
        assert.deepEqual(taken[phase]!.data.forkedFrom, { campaign: NAME, phase });
      }
      // No worker runs here: the started run's input shows where the fork begins.
      const history = await handle.fetchHistory();
      const started = history.events![0]!.workflowExecutionStartedEventAttributes!;
      const input = JSON.parse(Buffer.from(started.input!.payloads![0]!.data!).toString()) as CampaignWorkflowInput;
      await handle.terminate('the test only checks how the fork starts');
      assert.equal(input.nextPhase, 2, 'the fork starts with the phase after the one it continues from');
      assert.deepEqual(input.carry, original[1]!.data.carry);
      assert.deepEqual(
        input.history.map((h) => h.manifestKey),
        taken.map((m) => m.data.summary.manifestKey),
      );
      assert.equal(input.settings.curriculum, false);
    } finally {
      store.destroy();
    }
  });
});
