/**
 * The language model `stack.llm` names, served on this machine for the main job (a laptop's LLM path):
 * vLLM's CPU build (infra/vllm/environment.ts), the trainer's Python environment the campaign's
 * `webrl-torch` command runs from, and the model's checkpoint, each provisioned under the data dir on
 * first use like the other tools; then vLLM serves the model as models.actor.model, with runtime LoRA
 * so that each phase's adapter is loaded into it, until the main job stops it.
 */
import { join } from 'node:path';
import { chatTemplateFormat } from '../../browser/policies/promptFormat';
import type { Config } from '../../config/schema';
import { ensureSmolLM2, ensureTrainerEnvironment } from '../../trainers/torch/environment';
import { stackPaths } from '../stack';
import type { Log } from '../tools';
import { ensureVllm } from './environment';
import { startVllmServer, type RunningVllm } from './server';

export async function startLocalLlm(config: Config, log: Log): Promise<RunningVllm | undefined> {
  const llm = config.stack.llm;
  if (!llm || config.models.actor.backend !== 'completions') return undefined;
  ensureTrainerEnvironment();
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
  const vllm = await ensureVllm(log);
  const logFile = join(stackPaths(config).logDir, 'vllm.log');
  log(`vLLM: serving ${llm.model} as ${config.models.actor.model} on 127.0.0.1:${llm.port} (log: ${logFile}); about a minute to start`);
  return startVllmServer({
    python: vllm.path,
    model,
    servedModelName: config.models.actor.model,
    host: '127.0.0.1',
    port: llm.port,
    maxLoraRank: llm.maxLoraRank,
    maxModelLen: llm.maxModelLen,
    logFile,
  });
}
