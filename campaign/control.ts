/**
 * Client-side campaign operations: start (freeze the config in S3, start the workflow with readable
 * id, memo and search attributes), inspect, and steer (pause, resume, stop, retry a failed phase,
 * change the next phase's settings). The CLI and the main job are thin layers over these.
 */
import { WorkflowIdReusePolicy, type Client, type WorkflowHandle } from '@temporalio/client';
import { isDeepStrictEqual } from 'node:util';
import type { Config } from '../config/schema';
import type { ArtifactStore } from '../storage/artifactStore';
import { campaignKey } from '../storage/keys';
import { phaseManifestKey, type PhaseManifestData } from './manifest';
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
import { CAMPAIGN_ID, PHASE, STATUS, SUCCESS_RATE } from '../workflows/searchAttributes';

export class CampaignError extends Error {
  override name = 'CampaignError';
}

export function campaignWorkflowId(name: string): string {
  return `campaign-${name}`;
}

export function campaignConfigKey(name: string): string {
  return campaignKey(name, 'config.json');
}

/** Freezes the campaign's config in the store; a different config under the same name is refused. */
async function freezeConfig(store: ArtifactStore, config: Config): Promise<string> {
  const key = campaignConfigKey(config.campaign.name);
  const existing = await store.tryGetJson<Config>(key);
  if (existing && !isDeepStrictEqual(existing, JSON.parse(JSON.stringify(config)))) {
    throw new CampaignError(
      `campaign '${config.campaign.name}' already exists with a different configuration (${key}); ` +
        'choose another campaign.name to start a new one',
    );
  }
  if (!existing) await store.putJson(key, config);
  return key;
}

export function initialCampaignInput(config: Config, configKey: string): CampaignWorkflowInput {
  return {
    campaignId: config.campaign.name,
    configKey,
    seed: config.campaign.seed,
    phases: config.campaign.phases,
    settings: config.campaign.phase,
    nextPhase: 0,
    history: [],
    paused: false,
    stopAfterPhase: false,
    taskQueues: config.temporal.taskQueues,
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
async function forkedCampaignInput(store: ArtifactStore, config: Config, configKey: string, from: ForkPoint): Promise<CampaignWorkflowInput> {
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
  return { ...initialCampaignInput(config, configKey), nextPhase: from.phase + 1, history, ...(carry ? { carry } : {}) };
}

export async function startCampaign(
  client: Client,
  store: ArtifactStore,
  config: Config,
  options: { from?: ForkPoint } = {},
): Promise<WorkflowHandle<typeof campaignWorkflow>> {
  const configKey = await freezeConfig(store, config);
  const id = campaignWorkflowId(config.campaign.name);
  const input = options.from ? await forkedCampaignInput(store, config, configKey, options.from) : initialCampaignInput(config, configKey);
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
        configKey,
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

export async function campaignProgress(client: Client, name: string): Promise<CampaignProgress> {
  const handle = campaignHandle(client, name);
  const description = await handle.describe();
  if (description.status.name === 'RUNNING') return handle.query(progressQuery);
  if (description.status.name === 'COMPLETED') return (await handle.result()) as CampaignProgress;
  throw new CampaignError(`campaign '${name}' is ${description.status.name.toLowerCase()} (workflow ${handle.workflowId})`);
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
  status: string;
  campaignStatus?: string;
  phase?: number;
  successRate?: number;
  started: Date;
}

export async function listCampaigns(client: Client): Promise<CampaignListing[]> {
  const listing: CampaignListing[] = [];
  for await (const execution of client.workflow.list({ query: `WorkflowType = 'campaignWorkflow'` })) {
    const attributes = execution.typedSearchAttributes;
    const status = attributes.get(STATUS);
    const phase = attributes.get(PHASE);
    const successRate = attributes.get(SUCCESS_RATE);
    listing.push({
      workflowId: execution.workflowId,
      status: execution.status.name,
      ...(status !== undefined ? { campaignStatus: status } : {}),
      ...(phase !== undefined ? { phase } : {}),
      ...(successRate !== undefined ? { successRate } : {}),
      started: execution.startTime,
    });
  }
  return listing;
}
