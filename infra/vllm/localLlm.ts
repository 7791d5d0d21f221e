/**
 * The language model `stack.llm` names, served on this machine for the main job (a laptop's LLM path):
 * vLLM's CPU build (infra/vllm/environment.ts), the trainer's Python environment the campaign's
 * `webrl-torch` command runs from, and the model's checkpoint, each provisioned under the data dir on
 * first use like the other tools; then vLLM serves the model as models.actor.model, with runtime LoRA
 * so that each phase's adapter is loaded into it, until the main job stops it. With `criticPort`,
 * `webrl-torch serve-critic` serves the campaign's critics beside it (infra/criticServer.ts): the one
 * each phase's filter names, synced into models.critic.sharedDir.
 */
import { join, resolve } from 'node:path';
import { chatTemplateFormat } from '../../browser/policies/promptFormat';
import type { Config } from '../../config/campaignConfig';
import { ensureSmolLM2, ensureTrainerEnvironment } from '../../trainers/torch/environment';
import { startCriticServer, type RunningCriticServer } from '../criticServer';
import { stackPaths } from '../stack';
import type { Log } from '../tools';
import { ensureVllm } from './environment';
import { startVllmServer, type RunningVllm } from './server';

/** What the main job serves here; stop() ends both servers. */
export interface LocalLlm {
  vllm: RunningVllm;
  critic?: RunningCriticServer;
  stop(): Promise<void>;
}

export async function startLocalLlm(config: Config, log: Log): Promise<LocalLlm | undefined> {
  const llm = config.stack.llm;
  if (!llm || config.models.actor.backend !== 'completions') return undefined;
  const python = ensureTrainerEnvironment();
  const model = ensureSmolLM2();
  // The config check left the template of a model not yet provisioned to now (config/campaignConfig.ts).
  const actor = config.models.actor;
  if (actor.promptFormat === 'chat-template' && actor.tokenizer) {
    try {
      chatTemplateFormat(actor.tokenizer);
    } catch (error) {
      throw new Error(`models.actor.tokenizer: ${(error as Error).message} (${llm.model} was provisioned at ${model})`);
    }
  }
  const vllmTool = await ensureVllm(log);
  const logFile = join(stackPaths(config).logDir, 'vllm.log');
  log(`vLLM: serving ${llm.model} as ${config.models.actor.model} on 127.0.0.1:${llm.port} (log: ${logFile}); about a minute to start`);
  const vllm = await startVllmServer({
    python: vllmTool.path,
    model,
    servedModelName: config.models.actor.model,
    host: '127.0.0.1',
    port: llm.port,
    maxLoraRank: llm.maxLoraRank,
    maxModelLen: llm.maxModelLen,
    logFile,
  });
  const critic = config.models.critic;
  if (llm.criticPort === undefined || critic.backend !== 'served') return { vllm, stop: () => vllm.stop() };
  try {
    const criticLog = join(stackPaths(config).logDir, 'critic.log');
    log(`critic: serving the campaign's critics from ${critic.sharedDir} on 127.0.0.1:${llm.criticPort} (log: ${criticLog})`);
    const served = await startCriticServer({ python, baseModel: model, checkpoints: resolve(critic.sharedDir), port: llm.criticPort, logFile: criticLog });
    return { vllm, critic: served, stop: async () => void (await Promise.all([vllm.stop(), served.stop()])) };
  } catch (error) {
    await vllm.stop();
    throw error;
  }
}
