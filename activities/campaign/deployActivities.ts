/**
 * The serving handoff: after a phase trains the remote-served actor, `deployModels` makes that
 * checkpoint available under the phase's own name (`<campaign>-p<k>-actor`), and every later step that
 * calls the actor (rollouts, evaluation, the replay and reference log-probs) asks for that name: it is
 * recorded beside the checkpoint (`<checkpoint>.served.json`) and looked up by `servedModelName`.
 *
 *   vllm-lora  the checkpoint (an adapter directory) is synced to the shared directory, or named by its
 *              s3:// URI, and loaded with vLLM's runtime LoRA API; adapters of older phases are unloaded
 *   command    the user's command runs with {checkpoint} (a local copy), {name} and {role}; then the
 *              server is polled until it lists the name
 *
 * Idempotent: a name the server already lists with this adapter is not loaded again, and the finished
 * deployment is published once (ctx.once). A name listed with another adapter, a rejected adapter, a
 * failed command or a name never listed fail the phase non-retryably, with the server's message.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Config } from '../../config/schema';
import { loadModelSecrets } from '../../config/secrets';
import { splitCommand } from '../../models/remote/externalTrainer';
import { listServedModels, loadLoraAdapter, ModelServerError, unloadLoraAdapter, type ModelServerOptions } from '../../models/remote/modelServer';
import { downloadCheckpoint, type CheckpointStore } from '../../storage/checkpoints';
import type { ArtifactStore } from '../../storage/artifactStore';
import type { CampaignActivities } from './contract';
import { withHeartbeats, type CampaignContext } from './context';

const execFileAsync = promisify(execFile);

export interface ServedModelRecord {
  name: string;
  role: 'actor';
  checkpoint: string;
  backend: 'vllm-lora' | 'command';
  /** The adapter path as the server sees it (vllm-lora). */
  adapterPath?: string;
}

export function servedRecordKey(checkpointKey: string): string {
  return `${checkpointKey}.served.json`;
}

/** The name a served checkpoint is deployed under, or undefined when it was never deployed. */
export async function servedModelName(store: Pick<ArtifactStore, 'tryGetJson'>, checkpointKey: string): Promise<string | undefined> {
  return (await store.tryGetJson<ServedModelRecord>(servedRecordKey(checkpointKey)))?.name;
}

export function servedName(campaignId: string, phase: number, role: 'actor'): string {
  return `${campaignId}-p${phase}-${role}`;
}

type Serving = Exclude<Config['models']['serving'], { backend: 'none' }>;

function refuse(message: string): never {
  throw ApplicationFailure.nonRetryable(message, 'DeploymentFailed');
}

/** Stages a checkpoint at `dir` (via a temporary name, so a half-synced copy is never used). */
async function syncCheckpoint(store: CheckpointStore, key: string, dir: string): Promise<void> {
  if (existsSync(dir)) return;
  const partial = `${dir}.partial`;
  await rm(partial, { recursive: true, force: true });
  await downloadCheckpoint(store, key, partial);
  await rename(partial, dir);
}

async function waitUntilListed(server: ModelServerOptions, name: string, timeoutMs: number, pollMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    try {
      if ((await listServedModels(server)).some((model) => model.id === name)) return;
      last = 'not listed';
    } catch (error) {
      last = (error as Error).message;
    }
    if (Date.now() >= deadline) refuse(`${name} was not listed by ${server.baseUrl}/models within ${Math.round(timeoutMs / 1000)} s (last: ${last})`);
    Context.current().heartbeat({ waitingFor: name });
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

export function createDeployActivities(deps: { ctx: CampaignContext }): Pick<CampaignActivities, 'deployModels'> {
  const { ctx } = deps;

  async function deployWithVllm(serving: Extract<Serving, { backend: 'vllm-lora' }>, server: ModelServerOptions, record: ServedModelRecord, phase: number, campaignId: string): Promise<ServedModelRecord> {
    let adapterPath: string;
    if (serving.adapterLocation === 's3') {
      adapterPath = `s3://${ctx.store.bucket}/${ctx.store.prefix}${record.checkpoint}`;
    } else {
      const relative = join(campaignId, `phase-${phase}`, record.role);
      await syncCheckpoint(ctx.store, record.checkpoint, join(serving.sharedDir!, relative));
      adapterPath = join(serving.serverDir ?? serving.sharedDir!, relative);
    }
    const listed = (await listServedModels(server)).find((model) => model.id === record.name);
    if (listed && listed.root !== undefined && listed.root !== adapterPath) {
      refuse(`the served name ${record.name} is taken by the adapter ${listed.root}; this campaign's checkpoint ${record.checkpoint} (${adapterPath}) was not loaded`);
    }
    if (!listed) {
      try {
        await loadLoraAdapter(server, record.name, adapterPath);
      } catch (error) {
        if (error instanceof ModelServerError && error.status !== null) refuse(`the server refused the adapter ${record.name} (${adapterPath}): ${error.message}`);
        throw error;
      }
    }
    await waitUntilListed(server, record.name, serving.timeoutMs, 200);
    // Adapters of phases before the last `keepPhases` are no longer asked for.
    const stale = phase - serving.keepPhases;
    if (stale >= 0) {
      const old = servedName(campaignId, stale, record.role);
      if ((await listServedModels(server)).some((model) => model.id === old)) await unloadLoraAdapter(server, old);
    }
    return { ...record, adapterPath };
  }

  async function deployWithCommand(serving: Extract<Serving, { backend: 'command' }>, server: ModelServerOptions, record: ServedModelRecord): Promise<ServedModelRecord> {
    const listed = (await listServedModels(server).catch(() => [])).some((model) => model.id === record.name);
    if (!listed) {
      const dir = join(ctx.localRoot('cache'), 'serving', record.checkpoint);
      await syncCheckpoint(ctx.store, record.checkpoint, dir);
      const values: Record<string, string> = { checkpoint: dir, name: record.name, role: record.role };
      const [program, ...args] = splitCommand(serving.command).map((arg) => arg.replace(/\{(checkpoint|name|role)\}/g, (_, key: string) => values[key]!));
      try {
        await execFileAsync(program!, args, { timeout: serving.timeoutSeconds * 1000, maxBuffer: 16 * 1024 * 1024 });
      } catch (error) {
        const failure = error as { code?: unknown; stderr?: string; stdout?: string; message: string };
        const tail = `${failure.stdout ?? ''}${failure.stderr ?? ''}`.trim().split('\n').slice(-20).join('\n');
        refuse(`the deploy command for ${record.name} failed (${typeof failure.code === 'number' ? `exit code ${failure.code}` : failure.message}); last lines:\n${tail}`);
      }
    }
    await waitUntilListed(server, record.name, serving.timeoutSeconds * 1000, serving.pollMs);
    return record;
  }

  return {
    async deployModels(input) {
      const config = await ctx.config(input);
      const serving = config.models.serving;
      if (serving.backend === 'none') return { served: null };
      return ctx.once(ctx.key(input, 'serving', 'actor'), async () => {
        const secrets = loadModelSecrets();
        const server: ModelServerOptions = { baseUrl: serving.baseUrl, ...(secrets.llmApiKey ? { apiKey: secrets.llmApiKey } : {}), ...('timeoutMs' in serving ? { timeoutMs: serving.timeoutMs } : {}) };
        const planned: ServedModelRecord = { name: servedName(input.campaignId, input.phase, 'actor'), role: 'actor', checkpoint: input.actor, backend: serving.backend };
        const record = await withHeartbeats(
          () => ({ deploying: planned.name }),
          serving.backend === 'vllm-lora' ? deployWithVllm(serving, server, planned, input.phase, input.campaignId) : deployWithCommand(serving, server, planned),
        );
        const written = await ctx.store.putJson(servedRecordKey(input.actor), record);
        return { objects: [written], data: { served: { actor: { name: record.name, checkpoint: record.checkpoint } } } };
      });
    },
  };
}
