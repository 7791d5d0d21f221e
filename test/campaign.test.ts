import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { setTimeout as delay } from 'node:timers/promises';
import { ApplicationFailure } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { CampaignContext } from '../activities/campaign/context';
import { ModelCache } from '../activities/campaign/models';
import { createTrainActivities } from '../activities/campaign/trainActivities';
import { campaignWorkflowId, startCampaign } from '../campaign/control';
import type { Config } from '../config/schema';
import { connectWorker } from '../temporal/connection';
import { createWorker } from '../workers/factory';
import { runWorkers } from '../workers/run';
import { progressQuery } from '../workflows/campaign';
import type { CampaignProgress } from '../workflows/campaignTypes';
import { tinyCampaignConfig } from './harness/campaign';
import { startTestStack, type TestStack } from './harness/stack';

const execFileAsync = promisify(execFile);
const WEBRL = fileURLToPath(new URL('../bin/webrl.js', import.meta.url));
const MINUTES = 60_000;

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20 * MINUTES): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    await delay(200);
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function writeConfigFile(stack: TestStack, config: Config): Promise<string> {
  const file = join(stack.dir, `${config.campaign.name}.json`);
  await writeFile(file, JSON.stringify(config));
  return file;
}

interface RunHistory {
  runId: string;
  phase: number;
  events: Array<Record<string, unknown>>;
}

/** Every run of the campaign (one per phase after continue-as-new), with its history. */
async function campaignHistories(client: Client, name: string): Promise<RunHistory[]> {
  const runs: RunHistory[] = [];
  for await (const execution of client.workflow.list({ query: `WorkflowId = '${campaignWorkflowId(name)}'` })) {
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

/** Saves each run's history as `temporal workflow show --output json` prints it (replay fixtures). */
async function recordHistories(stack: TestStack, name: string, runs: RunHistory[], dir: string): Promise<void> {
  for (const run of runs) {
    const { stdout } = await execFileAsync(stack.temporalBinary, [
      'workflow', 'show', '--workflow-id', campaignWorkflowId(name), '--run-id', run.runId, '--output', 'json',
      '--address', stack.config.temporal.address, '--namespace', stack.config.temporal.namespace,
    ], { maxBuffer: 256 * 1024 * 1024 });
    await writeFile(join(dir, `campaign-${name}-phase-${run.phase}.json`), stdout);
  }
}

describe('the durable campaign on the real stack', () => {
  let stack: TestStack;
  let client: Client;

  before(async () => {
    stack = await startTestStack();
    client = await stack.client();
  });
  after(() => stack?.stop());

  test('a permanent failure in phase 2 training waits for an operator; retry-phase completes it; phases 0 and 1 ran once', async () => {
    const config = await tinyCampaignConfig(stack, 'retry', { phases: 2 });
    const configFile = await writeConfigFile(stack, config);
    const settings = { config, secrets: stack.secrets };
    const stop = new AbortController();
    const others = runWorkers(settings, ['control', 'browser'], stop.signal);
    // The train worker is composed here so that one activity can carry an injected fault.
    const fault = { on: true };
    const ctx = new CampaignContext(stack.store, join(stack.dir, 'work-retry'));
    const trainActivities = createTrainActivities({ ctx, models: new ModelCache(ctx) });
    const connection = await connectWorker(config, stack.secrets);
    const trainWorker = await createWorker({
      connection,
      config,
      taskQueue: config.temporal.taskQueues.train,
      activities: {
        ...trainActivities,
        async trainActor(input: Parameters<typeof trainActivities.trainActor>[0]) {
          if (fault.on && input.phase === 2) throw ApplicationFailure.nonRetryable('injected fault: the trainer rejected its data', 'InjectedFault');
          return trainActivities.trainActor(input);
        },
      },
    });
    const training = trainWorker.run();
    try {
      const handle = await startCampaign(client, stack.store, config);
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
      assert.match(retried.stdout, /campaign retry: retrying phase 2/);
      const final = (await client.workflow.getHandle(handle.workflowId).result()) as CampaignProgress;
      assert.equal(final.status, 'completed');
      assert.deepEqual(final.history.map((h) => h.phase), [0, 1, 2]);

      const runs = await campaignHistories(client, 'retry');
      assert.deepEqual(runs.map((r) => r.phase), [0, 1, 2], 'one workflow run per phase');
      for (const run of runs) {
        assert.ok(run.events.length < 10_000, `run of phase ${run.phase} has ${run.events.length} events`);
        if (run.phase > 1) continue;
        for (const [type, attempts] of activityStarts(run)) {
          // Rollout shards run once each; every other activity exactly once, each at its first attempt.
          assert.ok(attempts.every((a) => a === 1), `phase ${run.phase} ${type} was retried: ${attempts}`);
          if (type !== 'runRolloutShard') assert.equal(attempts.length, 1, `phase ${run.phase} ${type} ran ${attempts.length} times`);
        }
      }
      const phase2 = activityStarts(runs[2]!);
      assert.equal(phase2.get('trainActor')?.length, 2, 'the failed training ran again after retry-phase');
      if (process.env.WEBRL_RECORD_HISTORIES) await recordHistories(stack, 'retry', runs, process.env.WEBRL_RECORD_HISTORIES);
    } finally {
      stop.abort();
      trainWorker.shutdown();
      await Promise.all([others, training]);
      await connection.close();
    }
  });
});
