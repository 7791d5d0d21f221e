/**
 * A tiny campaign of the LLM path on the real stack: a completions actor, a chat ORM and an HTTP critic
 * behind local servers (test/models/fixtures), an external trainer that writes LoRA adapter
 * directories, and a serving backend that hands each phase's adapter to the actor's server. By default
 * that is the scriptable vLLM fixture, which answers every rollout step with an `exit` naming the model
 * the request asked for, so each stored trajectory says which model acted in it.
 *
 * Options put real parts in: real vLLM for the actor and serving (test/harness/vllm.ts), another trainer
 * command (webrl-torch: `webrlTorchCommand`), smaller campaign settings. Used by the campaign tests and
 * bench:llm.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Client, WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import { startCampaign } from '../../campaign/control';
import type { PhaseManifestData } from '../../activities/campaign/phaseManifest';
import { readPhaseManifests } from '../../campaign/manifest';
import { parseConfig } from '../../config/load';
import type { PromptFormatName } from '../../browser/policies/promptFormatNames';
import type { CompletionsActorSettings } from '../../models/backends/completions/settings';
import type { Config, ConfigInput } from '../../config/campaignConfig';
import { ArtifactStore, type Manifest } from '../../storage/artifactStore';
import { runWorkers } from '../../workers/run';
import type { CampaignProgress } from '../../workflows/campaignTypes';
import type { TrajectoryRecord } from '../../activities/campaign/episodes';
import { chatCompletion, startServer, type TestServer } from '../models/fixtures/servers';
import { startVllmServer, type VllmServer } from '../models/fixtures/vllmServer';
import { tinyCampaignConfig } from './campaign';
import type { TestStack } from './stack';
import { killWorkerMidway, startWorkerProcess, writeConfigFile } from './workerProcess';
import type { ChildProcess } from 'node:child_process';
import { exited } from '../../infra/processes';

const TRAINER = fileURLToPath(new URL('../models/fixtures/adapterTrainer.mjs', import.meta.url));
const DEPLOY = fileURLToPath(new URL('../models/fixtures/deployAdapter.mjs', import.meta.url));
export const BASE_MODEL = 'base-llm';

/** webrl-torch training small LoRA adapters (rank 4) of `model` on CPU: the trainer of the real-vLLM campaigns. */
export function webrlTorchCommand(python: string, model: string): string {
  return (
    `${join(dirname(python), 'webrl-torch')} train --base-model ${model} --data {data} --init {init} --reference {reference} --critic {critic} --out {out}` +
    ' --lora-rank 4 --lora-alpha 8 --max-length 512 --no-gradient-checkpointing --device cpu --dtype float32'
  );
}

/** An OpenAI-compatible completions server with vLLM's runtime LoRA routes, serving `base`. */
export interface ActorServer {
  baseUrl: string;
  base: string;
  /** The server's --max-lora-rank, when it is not vLLM's default. */
  maxLoraRank?: number;
  /** Log-prob requests the server takes at once (models.actor.concurrency), when it cannot take the default. */
  logprobConcurrency?: number;
  close(): Promise<void>;
}

export interface LlmCampaignRun<S extends ActorServer = VllmServer> {
  config: Config;
  final: CampaignProgress;
  manifests: Manifest<PhaseManifestData>[];
  /** The actor's server: the scriptable vLLM fixture, or `options.actor.server` (real vLLM). */
  vllm: S;
  store: ArtifactStore;
  /** Per phase and purpose ('probe' | 'train' | 'eval'): the model named in each trajectory's answer. */
  actedBy(phase: number, purpose: string): Promise<string[]>;
  close(): Promise<void>;
}

type CampaignInput = NonNullable<ConfigInput['campaign']>;

export interface LlmCampaignOptions<S extends ActorServer = VllmServer> {
  phases?: number;
  /** Another server for the actor and serving (closed with the run), the generation length and the request timeout. */
  actor?: {
    server: S;
    maxTokens?: number;
    timeoutMs?: number;
    promptFormat?: PromptFormatName;
    tokenizer?: string;
    /** An SFT data file phase 0's actor trains on beside the oracle's demonstrations. */
    sftData?: CompletionsActorSettings['sftData'];
  };
  /** Another trainer command (placeholders as in models.trainer.command). */
  trainer?: { command: string; timeoutSeconds?: number };
  /** Smaller settings for the tiny campaign, section by section. */
  campaign?: Pick<CampaignInput, 'phase' | 'environment' | 'training'>;
  /** Store prefix (default: the campaign name). */
  prefix?: string;
  /** Another run's config, whose campaign settings and site ports this run shares (runs to compare). */
  like?: Config;
  /** Run the worker as a process and SIGKILL it while it deploys this phase's actor, then start another. */
  crashInDeployOfPhase?: number;
  /** The ORM's verdict on every trajectory (default YES: every rollout a success, none to evolve from). */
  ormVerdict?: 'YES' | 'NO';
  /** More model settings (a task generator, say), merged over the harness's. */
  models?: ConfigInput['models'];
  /** Acts on the running campaign (an operator); the run's result is awaited once it returns. */
  whileRunning?(handle: WorkflowHandleWithFirstExecutionRunId): Promise<void>;
}

export async function runLlmCampaign<S extends ActorServer = VllmServer>(
  stack: TestStack,
  client: Client,
  name: string,
  serving: 'vllm-lora' | 'command',
  options: LlmCampaignOptions<S> = {},
): Promise<LlmCampaignRun<S>> {
  const phases = options.phases ?? 2;
  if (options.actor && (serving !== 'vllm-lora' || options.crashInDeployOfPhase !== undefined))
    throw new Error('another actor server works with vllm-lora serving and no crash');
  const fixture = options.actor ? undefined : await startVllmServer({ base: BASE_MODEL, answer: (model) => `exit(message="acted by ${model}")` });
  // S is VllmServer exactly when no other server is given.
  const vllm = (options.actor?.server ?? fixture) as S;
  const yes = options.ormVerdict === 'NO' ? 0.3 : 0.7;
  const orm: TestServer = await startServer(() => ({
    json: chatCompletion(options.ormVerdict ?? 'YES', 'orm', [
      { token: 'YES', logprob: Math.log(yes) },
      { token: 'NO', logprob: Math.log(1 - yes) },
    ]),
  }));
  const critic: TestServer = await startServer((request) => ({
    json: { values: ((request.body as { states: unknown[] }).states ?? []).map(() => [0.5, 0.5]) },
  }));
  const shared = await mkdtemp(join(tmpdir(), 'webrl-shared-adapters-'));
  const tiny = options.like ?? (await tinyCampaignConfig(stack, name, { phases }));
  const { phase, environment, training } = options.campaign ?? {};
  const config = parseConfig({
    ...tiny,
    campaign: {
      ...tiny.campaign,
      phase: { ...tiny.campaign.phase, ...phase },
      environment: { ...tiny.campaign.environment, ...environment },
      training: { ...tiny.campaign.training, ...training },
    },
    s3: { ...tiny.s3, prefix: options.prefix ?? `${name}/` },
    models: {
      actor: {
        backend: 'completions',
        baseUrl: vllm.baseUrl,
        model: vllm.base,
        maxAttempts: 1,
        retryDelayMs: 0,
        timeoutMs: options.actor?.timeoutMs ?? 10_000,
        ...(vllm.logprobConcurrency !== undefined ? { concurrency: vllm.logprobConcurrency } : {}),
        ...(options.actor?.maxTokens ? { maxTokens: options.actor.maxTokens } : {}),
        ...(options.actor?.promptFormat ? { promptFormat: options.actor.promptFormat } : {}),
        ...(options.actor?.tokenizer ? { tokenizer: options.actor.tokenizer } : {}),
        ...(options.actor?.sftData ? { sftData: options.actor.sftData } : {}),
      },
      orm: { backend: 'chat', baseUrl: `${orm.url}/v1`, model: 'orm', maxAttempts: 1, retryDelayMs: 0 },
      critic: { backend: 'http', baseUrl: critic.url, maxAttempts: 1, retryDelayMs: 0 },
      trainer: { backend: 'external', command: `${process.execPath} ${TRAINER} --data {data} --out {out}`, ...options.trainer },
      serving:
        serving === 'vllm-lora'
          ? { backend: 'vllm-lora', baseUrl: vllm.baseUrl, sharedDir: shared, ...(vllm.maxLoraRank !== undefined ? { maxLoraRank: vllm.maxLoraRank } : {}) }
          : {
              backend: 'command',
              baseUrl: vllm.baseUrl,
              command: `${process.execPath} ${DEPLOY} ${fixture!.url} {checkpoint} {name} {role}`,
              timeoutSeconds: 60,
              pollMs: 50,
            },
      ...options.models,
    },
  });
  const store = new ArtifactStore(config.s3, stack.secrets.s3);
  const stop = new AbortController();
  const crashPhase = options.crashInDeployOfPhase;
  const configFile = crashPhase === undefined ? undefined : await writeConfigFile(stack, config, `${name}-worker`);
  let worker: ChildProcess | undefined = configFile ? startWorkerProcess(stack, configFile, `${name}-1`) : undefined;
  const workers = worker ? Promise.resolve() : runWorkers({ config, secrets: stack.secrets }, ['control', 'browser', 'train'], stop.signal);
  if (crashPhase !== undefined) {
    // The load of that phase's adapter is held until the worker that asked for it is dead.
    let released: () => void = () => {};
    const held = new Promise<void>((resolve) => (released = resolve));
    fixture!.beforeLoad = (model) => (model === `${name}-p${crashPhase}-actor` ? held : Promise.resolve());
    void killWorkerMidway(worker!, `the deployment of phase ${crashPhase}`, async () =>
      fixture!.requests.some((r) => r.url === '/v1/load_lora_adapter' && (r.body as { lora_name?: string }).lora_name === `${name}-p${crashPhase}-actor`),
    ).then(() => {
      released();
      worker = startWorkerProcess(stack, configFile!, `${name}-2`);
    });
  }
  const close = async () => {
    stop.abort();
    await workers.catch(() => undefined);
    if (worker && worker.exitCode === null && worker.signalCode === null) {
      process.kill(-worker.pid!, 'SIGKILL');
      await exited(worker);
    }
    await Promise.all([vllm.close(), orm.close(), critic.close()]);
    await rm(shared, { recursive: true, force: true });
    store.destroy();
  };
  try {
    const handle = await startCampaign(client, store, config);
    await options.whileRunning?.(handle);
    const final = (await handle.result()) as CampaignProgress;
    const manifests = await readPhaseManifests(store, name);
    const actedBy = async (phase: number, purpose: string) => {
      const models: string[] = [];
      for await (const { key } of store.list(`campaigns/${name}/phase-${phase}/rollouts/${purpose}/`)) {
        if (!/\/trajectories\/[^/]+\.json$/.test(key)) continue;
        const record = await store.getJson<TrajectoryRecord>(key);
        for (const round of record.rounds) models.push(/acted by ([\w.-]+)/.exec(round.response)?.[1] ?? `unparsed: ${round.response}`);
      }
      return models;
    };
    return { config, final, manifests, vllm, store, actedBy, close };
  } catch (error) {
    await close();
    throw error;
  }
}
