/**
 * The serving handoff: after a phase trains the remote-served actor, `deployModels` makes that
 * checkpoint available under the phase's own name (`<campaign>-p<k>-actor`), and every later step that
 * calls the actor (rollouts, evaluation, the replay and reference log-probs) asks for that name: it is
 * recorded beside the checkpoint (`<checkpoint>.served.json`) and made ready by `servedActor`.
 *
 *   vllm-lora  the checkpoint (an adapter directory) is synced to the shared directory, checked against
 *              what vLLM accepts (rank <= maxLoraRank, no DoRA, no bias, modules_to_save only
 *              classifier/score), and loaded with vLLM's runtime LoRA API; adapters of older phases are
 *              unloaded. vLLM keeps runtime adapters in memory only, so `servedActor` loads the adapter
 *              again when a restarted server no longer lists it.
 *   command    the user's command runs with {checkpoint} (a local copy), {name} and {role}; then the
 *              server is polled until it lists the name
 *
 * Idempotent: a name the server already lists with this adapter is not loaded again, a load that races
 * another load of the same adapter (vLLM answers 400 "already been loaded") is a success, and the
 * finished deployment is published once (ctx.once). A server error (5xx) or an unreachable server is
 * retried; an adapter vLLM would refuse, a name listed with another adapter, a 4xx refusal, a failed
 * command or a name never listed fail the phase non-retryably, with the server's message.
 */
import { ApplicationFailure } from '@temporalio/activity';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import type { z } from 'zod';
import type { Config } from '../../config/campaignConfig';
import type { ModelSecrets } from '../../config/secrets';
import type { settings as command } from '../../models/backends/command/settings';
import type { settings as vllmLora } from '../../models/backends/vllm-lora/settings';
import { splitCommand } from '../../models/remote/externalTrainer';
import { listServedModels, loadLoraAdapter, ModelServerError, unloadLoraAdapter, type ModelServerOptions } from '../../models/remote/modelServer';
import { syncCheckpoint } from '../../storage/checkpoints';
import type { TrainActivities } from './contract';
import type { CampaignContext } from './context';
import { heartbeat, withHeartbeats } from '../heartbeats';
import type { ActorServing, RolesFor, ServedModelRecord } from './roles';

const execFileAsync = promisify(execFile);

export function servedRecordKey(checkpointKey: string): string {
  return `${checkpointKey}.served.json`;
}

/**
 * What vLLM's runtime LoRA loading refuses, read from the adapter's adapter_config.json before the
 * load: the problem, or undefined. (The trainer's rank is checked earlier, at config check.)
 */
export async function adapterProblem(dir: string, maxLoraRank: number): Promise<string | undefined> {
  let config: { r?: unknown; use_dora?: unknown; bias?: unknown; modules_to_save?: unknown };
  try {
    config = JSON.parse(await readFile(join(dir, 'adapter_config.json'), 'utf8')) as typeof config;
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
    return missing
      ? "it has no adapter_config.json: a full checkpoint (--full-finetune?) where vLLM's runtime LoRA loading needs a LoRA adapter"
      : `its adapter_config.json is not JSON: ${(error as Error).message}`;
  }
  if (typeof config.r === 'number' && config.r > maxLoraRank) return `its rank ${config.r} is above the server's --max-lora-rank ${maxLoraRank}`;
  if (config.use_dora === true) return 'it is a DoRA adapter, which vLLM does not load';
  if (config.bias !== undefined && config.bias !== null && config.bias !== 'none')
    return `it trains biases (bias: ${JSON.stringify(config.bias)}), which vLLM does not load`;
  const extra = Array.isArray(config.modules_to_save) ? config.modules_to_save.filter((m) => m !== 'classifier' && m !== 'score') : [];
  if (extra.length) return `it saves whole modules (${extra.join(', ')}); vLLM takes only classifier and score in modules_to_save`;
  return undefined;
}

export function servedName(campaignId: string, phase: number, role: 'actor'): string {
  return `${campaignId}-p${phase}-${role}`;
}

type VllmServing = z.output<typeof vllmLora.serving>;
type CommandServing = z.output<typeof command.serving>;
type Serving = VllmServing | CommandServing;

function refuse(message: string): never {
  throw ApplicationFailure.nonRetryable(message, 'DeploymentFailed');
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
    heartbeat({ waitingFor: name });
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

/** Whether the server lists `name` with this adapter; a name listed with another adapter is refused. */
async function listedWith(server: ModelServerOptions, name: string, adapterPath: string): Promise<boolean> {
  const listed = (await listServedModels(server)).find((model) => model.id === name);
  if (!listed) return false;
  if (listed.root === undefined || listed.root === adapterPath) return true;
  refuse(`the served name ${name} is taken by the adapter ${listed.root}; ${adapterPath} was not loaded`);
}

/** Loads the adapter under its name unless the server lists it with this path already; idempotent. */
async function loadAdapter(server: ModelServerOptions, name: string, adapterPath: string): Promise<void> {
  if (await listedWith(server, name, adapterPath)) return;
  try {
    await loadLoraAdapter(server, name, adapterPath);
  } catch (error) {
    if (!(error instanceof ModelServerError) || error.status === null) throw error; // unreachable: retried
    // vLLM answers 500 both when its worker rejects the adapter (rank, modules) and when it is in trouble.
    if (error.status >= 500 && !/add_lora method failed/.test(error.message)) throw error; // retried
    // A retried deployment racing its own first load: vLLM loads one name at a time and refuses the second.
    if (error.status === 400 && /already been loaded/.test(error.message)) {
      if (await listedWith(server, name, adapterPath)) return;
      refuse(`the served name ${name} is taken by an adapter the server no longer lists; ${adapterPath} was not loaded`);
    }
    refuse(`the server refused the adapter ${name} (${adapterPath}): ${error.message}`);
  }
}

/** Syncs the checkpoint to the shared directory (again, if it was removed) and checks it; the path as the server sees it. */
async function stageAdapter(ctx: CampaignContext, serving: VllmServing, record: ServedModelRecord, relative: string): Promise<string> {
  const local = join(serving.sharedDir!, relative);
  await syncCheckpoint(ctx.store, record.checkpoint, local);
  const problem = await adapterProblem(local, serving.maxLoraRank);
  if (problem) refuse(`vLLM would refuse the adapter ${record.name} (${record.checkpoint}): ${problem}`);
  return join(serving.serverDir ?? serving.sharedDir!, relative);
}

function serverOptions(serving: Serving, secrets: ModelSecrets): ModelServerOptions {
  return {
    baseUrl: serving.baseUrl,
    ...(secrets.llmApiKey ? { apiKey: secrets.llmApiKey } : {}),
    ...('timeoutMs' in serving ? { timeoutMs: serving.timeoutMs } : {}),
  };
}

/**
 * The name to ask the server for when acting with (or scoring) the checkpoint `checkpointKey`, or
 * undefined when it was never deployed (the configured model serves it), made ready by the serving
 * backend where it may have lost it.
 */
export async function servedActor(ctx: CampaignContext, serving: ActorServing | undefined, checkpointKey: string): Promise<string | undefined> {
  const record = await ctx.store.tryGetJson<ServedModelRecord>(servedRecordKey(checkpointKey));
  if (!record) return undefined;
  return serving ? serving.ready(record) : record.name;
}

/**
 * vLLM's runtime LoRA API. vLLM keeps runtime adapters in memory only, so an adapter a restarted
 * server no longer lists is staged and loaded again before it is asked for.
 */
export function vllmLoraServing(ctx: CampaignContext, serving: VllmServing, secrets: ModelSecrets): ActorServing {
  const server = serverOptions(serving, secrets);
  return {
    maxLoraRank: serving.maxLoraRank,

    async deploy(planned, scope) {
      const record: ServedModelRecord = { ...planned, backend: 'vllm-lora' };
      const adapterPath = await stageAdapter(ctx, serving, record, join(scope.campaignId, `phase-${scope.phase}`, record.role));
      await loadAdapter(server, record.name, adapterPath);
      await waitUntilListed(server, record.name, serving.timeoutMs, 200);
      // Adapters of phases before the last `keepPhases` are no longer asked for.
      const stale = scope.phase - serving.keepPhases;
      if (stale >= 0) {
        const old = servedName(scope.campaignId, stale, record.role);
        if ((await listServedModels(server)).some((model) => model.id === old)) await unloadLoraAdapter(server, old);
      }
      return { ...record, adapterPath };
    },

    async ready(record) {
      if (record.adapterPath === undefined) return record.name;
      if (!(await listServedModels(server)).some((model) => model.id === record.name)) {
        const adapterPath = await stageAdapter(ctx, serving, record, relative(serving.serverDir ?? serving.sharedDir!, record.adapterPath));
        await loadAdapter(server, record.name, adapterPath);
      }
      return record.name;
    },
  };
}

/** The user's deploy command, run with {checkpoint} (a local copy), {name} and {role}; then the server is polled until it lists the name. */
export function commandServing(ctx: CampaignContext, serving: CommandServing, secrets: ModelSecrets): ActorServing {
  const server = serverOptions(serving, secrets);
  return {
    async deploy(planned) {
      const record: ServedModelRecord = { ...planned, backend: 'command' };
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
          refuse(
            `the deploy command for ${record.name} failed (${typeof failure.code === 'number' ? `exit code ${failure.code}` : failure.message}); last lines:\n${tail}`,
          );
        }
      }
      await waitUntilListed(server, record.name, serving.timeoutSeconds * 1000, serving.pollMs);
      return record;
    },

    async ready(record) {
      return record.name;
    },
  };
}

export function createDeployActivities(deps: { ctx: CampaignContext; roles: RolesFor }): Pick<TrainActivities, 'deployModels'> {
  const { ctx, roles } = deps;

  return {
    async deployModels(input) {
      const serving = roles(await ctx.config(input)).serving;
      if (!serving) return { served: null };
      return ctx.once(ctx.key(input, 'serving', 'actor'), async () => {
        const planned = { name: servedName(input.campaignId, input.phase, 'actor'), role: 'actor' as const, checkpoint: input.actor };
        const record = await withHeartbeats(() => ({ deploying: planned.name }), serving.deploy(planned, input));
        const written = await ctx.store.putJson(servedRecordKey(input.actor), record);
        return { objects: [written], data: { served: { actor: { name: record.name, checkpoint: record.checkpoint } } } };
      });
    },
  };
}
