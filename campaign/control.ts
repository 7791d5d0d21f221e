/**
 * Client-side campaign operations: start (freeze the config in S3, start the workflow with readable
 * id, memo and search attributes), inspect, and steer (pause, resume, stop, retry a failed phase,
 * change the next phase's settings). The CLI and the main job are thin layers over these.
 */
import { WorkflowIdReusePolicy, type Client, type WorkflowHandle, type WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import proto from '@temporalio/proto';
import { configSha256, differingFields, frozenConfigBytes } from '../config/frozen';
import type { Config } from '../config/campaignConfig';
import { assertEnvironmentReady, backendOf } from '../env/backends/registry';
import { assertModelsReady } from '../models/backends/registry';
import type { ArtifactStore } from '../storage/artifactStore';
import { campaignKey } from '../storage/keys';
import type { PhaseManifestData } from '../activities/campaign/phaseManifest';
import { phaseManifestKey } from '../storage/keys';
import {
  campaignWorkflow,
  pauseSignal,
  progressQuery,
  resumeSignal,
  retryPhaseUpdate,
  stopAfterPhaseSignal,
  updateSettingsUpdate,
  type CampaignWorkflowInput,
} from '../workflows/campaign';
import type { CampaignProgress, CarryOver, PhaseSettings, PhaseSummary } from '../workflows/campaignTypes';
import { CAMPAIGN_ID, PHASE, STATUS, SUCCESS_RATE } from '../temporal/searchAttributes';

export class CampaignError extends Error {
  override name = 'CampaignError';
}

export function campaignWorkflowId(name: string): string {
  return `campaign-${name}`;
}

export function campaignConfigKey(name: string): string {
  return campaignKey(name, 'config.json');
}

/** How many differing fields a refusal names before it says how many more there are. */
const DIFFERENCES_NAMED = 8;

/**
 * Freezes the campaign's config in the store, atomically: of two starts racing under one name, one
 * config is written and the other start compares against it, so a config that differs is refused,
 * naming the fields that differ, before any workflow starts.
 */
async function freezeConfig(store: ArtifactStore, config: Config): Promise<{ key: string; sha256: string }> {
  const key = campaignConfigKey(config.campaign.name);
  const { created, stored } = await store.putBytesOnce(key, frozenConfigBytes(config), 'application/json');
  if (!created) {
    const differing = differingFields(JSON.parse(stored.toString('utf8')), JSON.parse(frozenConfigBytes(config)));
    if (differing.length) {
      const named =
        differing.slice(0, DIFFERENCES_NAMED).join(', ') + (differing.length > DIFFERENCES_NAMED ? ` and ${differing.length - DIFFERENCES_NAMED} more` : '');
      throw new CampaignError(
        `campaign '${config.campaign.name}' already exists with a different configuration (${key}); differing: ${named}. ` +
          'Start it with the same config, or choose another campaign.name to start a new one',
      );
    }
  }
  return { key, sha256: configSha256(stored) };
}

export function initialCampaignInput(config: Config, frozen: { key: string; sha256: string }): CampaignWorkflowInput {
  return {
    campaignId: config.campaign.name,
    configKey: frozen.key,
    configSha256: frozen.sha256,
    seed: config.campaign.seed,
    phases: config.campaign.phases,
    settings: config.campaign.phase,
    nextPhase: 0,
    history: [],
    paused: false,
    stopAfterPhase: false,
    taskQueues: config.temporal.taskQueues,
    heartbeatTimeoutSeconds: config.temporal.heartbeatTimeoutSeconds,
    // A backend that prepares its sites before each phase has the workflow ask it to.
    ...(backendOf(config).backend.prepare ? { environmentChecks: true } : {}),
  };
}

/** A published phase of another campaign that a new campaign continues from. */
export interface ForkPoint {
  campaign: string;
  phase: number;
}

/** `<campaign>:<phase>`, as the CLI takes it. */
export function parseForkPoint(text: string): ForkPoint {
  const match = /^(.+):(\d+)$/.exec(text);
  if (!match) throw new CampaignError(`--from: expected <campaign>:<phase>, e.g. my-campaign:0, got '${text}'`);
  return { campaign: match[1]!, phase: Number(match[2]) };
}

/**
 * The input of a campaign that continues from another campaign's published phase (an ablation or a
 * variant that shares its SFT, say): the source's phases 0..from.phase are published again as this
 * campaign's own (same artifacts, by reference, so nothing is copied or recomputed), and the workflow
 * starts with the next phase and the source's models, replay buffer and failed tasks.
 */
async function forkedCampaignInput(
  store: ArtifactStore,
  config: Config,
  frozen: { key: string; sha256: string },
  from: ForkPoint,
): Promise<CampaignWorkflowInput> {
  const name = config.campaign.name;
  if (from.campaign === name) throw new CampaignError(`--from: campaign '${name}' cannot continue from itself`);
  if (from.phase >= config.campaign.phases) {
    throw new CampaignError(`--from: phase ${from.phase} leaves nothing to run; campaign.phases is ${config.campaign.phases}`);
  }
  const history: PhaseSummary[] = [];
  let carry: CarryOver | undefined;
  for (let phase = 0; phase <= from.phase; phase++) {
    const source = await store.readManifest<PhaseManifestData>(phaseManifestKey(from.campaign, phase));
    if (!source) throw new CampaignError(`--from: campaign '${from.campaign}' has not published phase ${phase} (${phaseManifestKey(from.campaign, phase)})`);
    const manifestKey = phaseManifestKey(name, phase);
    const data: PhaseManifestData = {
      ...source.data,
      campaignId: name,
      summary: { ...source.data.summary, manifestKey },
      forkedFrom: { campaign: from.campaign, phase },
    };
    const published = await store.publishManifest(manifestKey, source.objects, data);
    history.push(published.data.summary);
    carry = published.data.carry;
  }
  return { ...initialCampaignInput(config, frozen), nextPhase: from.phase + 1, history, ...(carry ? { carry } : {}) };
}

export async function startCampaign(
  client: Client,
  store: ArtifactStore,
  config: Config,
  options: { from?: ForkPoint } = {},
): Promise<WorkflowHandleWithFirstExecutionRunId<typeof campaignWorkflow>> {
  // A campaign starts only when its backend's pre-start check passes (a webarena campaign's tasks, sites and accounts).
  await assertEnvironmentReady(config, { store });
  // And the model backends' files are usable (a completions actor's SFT data file in its prompt format, its init checkpoint).
  await assertModelsReady(config, `campaign ${config.campaign.name}`, store);
  const frozen = await freezeConfig(store, config);
  const id = campaignWorkflowId(config.campaign.name);
  const input = options.from ? await forkedCampaignInput(store, config, frozen, options.from) : initialCampaignInput(config, frozen);
  return client.workflow.start(campaignWorkflow, {
    workflowId: id,
    taskQueue: config.temporal.taskQueues.control,
    args: [input],
    // A finished campaign may be started again: finished phases return their published manifests.
    workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
    memo: {
      config: {
        seed: config.campaign.seed,
        phases: config.campaign.phases,
        phase: config.campaign.phase,
        s3: `${config.s3.endpoint}/${config.s3.bucket}/${config.s3.prefix}${campaignKey(config.campaign.name)}`,
        configKey: frozen.key,
        configSha256: frozen.sha256,
        ...(options.from ? { forkedFrom: options.from } : {}),
      },
    },
    typedSearchAttributes: [
      { key: CAMPAIGN_ID, value: config.campaign.name },
      { key: STATUS, value: 'running' },
      { key: PHASE, value: input.nextPhase },
    ],
    staticSummary:
      `WebRL campaign ${config.campaign.name}: SFT + ${config.campaign.phases} phases, seed ${config.campaign.seed}` +
      (options.from ? `, continuing from ${options.from.campaign} phase ${options.from.phase}` : ''),
  });
}

export function campaignHandle(client: Client, name: string): WorkflowHandle<typeof campaignWorkflow> {
  return client.workflow.getHandle<typeof campaignWorkflow>(campaignWorkflowId(name));
}

/** How long a worker's last poll may lie back before it counts as gone (a poll waits up to a minute). */
const POLLER_SILENCE_MS = 90_000;
/** How long `status` waits for a worker to answer the progress query. */
const QUERY_DEADLINE_MS = 10_000;

/** Whether a worker polled the task queue's workflow tasks recently. */
async function workflowWorkerPolls(client: Client, taskQueue: string): Promise<boolean> {
  const response = await client.workflowService.describeTaskQueue({
    namespace: client.options.namespace,
    taskQueue: { name: taskQueue },
    taskQueueType: proto.temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
  });
  const now = Date.now();
  return (response.pollers ?? []).some((poller) => {
    const seconds = Number(poller.lastAccessTime?.seconds ?? 0);
    return now - seconds * 1000 < POLLER_SILENCE_MS;
  });
}

/**
 * A running campaign's progress comes from its worker (a query); without one it would hang until a
 * deadline, so a campaign whose worker is gone is said to be so, with what starts one.
 */
export async function campaignProgress(client: Client, name: string): Promise<CampaignProgress> {
  const handle = campaignHandle(client, name);
  const description = await handle.describe();
  if (description.status.name === 'COMPLETED') return (await handle.result()) as CampaignProgress;
  if (description.status.name !== 'RUNNING') {
    throw new CampaignError(`campaign '${name}' is ${description.status.name.toLowerCase()} (workflow ${handle.workflowId})`);
  }
  const noWorker = () => {
    const phase = description.typedSearchAttributes.get(PHASE);
    return new NoWorkerError(
      `campaign '${name}' is running${phase === undefined ? '' : ` (phase ${String(phase)})`} but no worker answers on task queue ` +
        `'${description.taskQueue}'; start one with 'webrl worker' or 'npm run campaign' (same config)`,
    );
  };
  if (!(await workflowWorkerPolls(client, description.taskQueue))) throw noWorker();
  try {
    return await client.withDeadline(Date.now() + QUERY_DEADLINE_MS, () => handle.query(progressQuery));
  } catch {
    throw noWorker();
  }
}

/** A running campaign that no worker serves: nothing moves until one starts. */
export class NoWorkerError extends CampaignError {
  override name = 'NoWorkerError';
}

export const pauseCampaign = (client: Client, name: string) => campaignHandle(client, name).signal(pauseSignal);
export const resumeCampaign = (client: Client, name: string) => campaignHandle(client, name).signal(resumeSignal);
export const stopCampaignAfterPhase = (client: Client, name: string) => campaignHandle(client, name).signal(stopAfterPhaseSignal);

export function retryFailedPhase(client: Client, name: string): Promise<number> {
  return campaignHandle(client, name).executeUpdate(retryPhaseUpdate);
}

export function changePhaseSettings(client: Client, name: string, update: Partial<PhaseSettings>): Promise<PhaseSettings> {
  return campaignHandle(client, name).executeUpdate(updateSettingsUpdate, { args: [update] });
}

export interface CampaignListing {
  workflowId: string;
  /** The campaign's state: its own (running, paused, waiting-for-operator, completed, stopped) while its run is open or completed, else how the run ended. */
  status: string;
  phase?: number;
  successRate?: number;
  started: Date;
}

/**
 * One row per campaign, from its current run: a campaign continues as new after every phase (those
 * runs are left out), and a campaign started again after it ended has several closed runs (the
 * latest counts).
 */
export async function listCampaigns(client: Client): Promise<CampaignListing[]> {
  const latest = new Map<string, CampaignListing>();
  const query = `WorkflowType = 'campaignWorkflow' AND ExecutionStatus != 'ContinuedAsNew'`;
  for await (const execution of client.workflow.list({ query })) {
    const previous = latest.get(execution.workflowId);
    if (previous && previous.started >= execution.startTime) continue;
    const attributes = execution.typedSearchAttributes;
    const own = attributes.get(STATUS);
    const open = execution.status.name === 'RUNNING' || execution.status.name === 'COMPLETED';
    const phase = attributes.get(PHASE);
    const successRate = attributes.get(SUCCESS_RATE);
    latest.set(execution.workflowId, {
      workflowId: execution.workflowId,
      status: open && own !== undefined ? own : execution.status.name.toLowerCase(),
      ...(phase !== undefined ? { phase } : {}),
      ...(successRate !== undefined ? { successRate } : {}),
      started: execution.startTime,
    });
  }
  return [...latest.values()].sort((a, b) => a.workflowId.localeCompare(b.workflowId));
}
