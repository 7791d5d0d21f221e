/**
 * Serving through vLLM's runtime LoRA API: the checkpoint (an adapter directory) is synced to the
 * shared directory, checked against what vLLM accepts (rank <= maxLoraRank, no DoRA, no bias,
 * modules_to_save only classifier/score), and loaded; adapters of older phases are unloaded.
 * Idempotent: a name the server already lists with this adapter is not loaded again, and a load that
 * races another load of the same adapter (vLLM answers 400 "already been loaded") is a success.
 */
import { readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import type { z } from 'zod';
import type { ModelSecrets } from '../../../config/secrets';
import { syncCheckpoint } from '../../../storage/checkpoints';
import { listServedModels, loadLoraAdapter, ModelServerError, unloadLoraAdapter, type ModelServerOptions } from '../../remote/modelServer';
import type { Heartbeats, RoleStorage } from '../contract';
import type { ActorServing, ServedModelRecord } from '../roles';
import { refuse, servedName, serverOptions, waitUntilListed } from '../serving';
import type { settings } from './settings';

type VllmServing = z.output<typeof settings.serving>;

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
async function stageAdapter(storage: RoleStorage, serving: VllmServing, record: ServedModelRecord, relative: string): Promise<string> {
  const local = join(serving.sharedDir!, relative);
  await syncCheckpoint(storage.store, record.checkpoint, local);
  const problem = await adapterProblem(local, serving.maxLoraRank);
  if (problem) refuse(`vLLM would refuse the adapter ${record.name} (${record.checkpoint}): ${problem}`);
  return join(serving.serverDir ?? serving.sharedDir!, relative);
}

/**
 * vLLM's runtime LoRA API. vLLM keeps runtime adapters in memory only, so an adapter a restarted
 * server no longer lists is staged and loaded again before it is asked for.
 */
export function vllmLoraServing(storage: RoleStorage, serving: VllmServing, secrets: ModelSecrets, heartbeats: Heartbeats): ActorServing {
  const server = serverOptions(serving, secrets);
  return {
    maxLoraRank: serving.maxLoraRank,

    async deploy(planned, scope) {
      const record: ServedModelRecord = { ...planned, backend: 'vllm-lora' };
      const adapterPath = await stageAdapter(storage, serving, record, join(scope.campaignId, `phase-${scope.phase}`, record.role));
      await loadAdapter(server, record.name, adapterPath);
      await waitUntilListed(server, record.name, serving.timeoutMs, 200, heartbeats);
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
        const adapterPath = await stageAdapter(storage, serving, record, relative(serving.serverDir ?? serving.sharedDir!, record.adapterPath));
        await loadAdapter(server, record.name, adapterPath);
      }
      return record.name;
    },
  };
}
