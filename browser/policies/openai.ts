/**
 * A model behind an OpenAI-compatible COMPLETIONS endpoint (vLLM, TGI, ...) prompted like the released
 * WebRL checkpoints (webrl.md §4) or with its own chat template (promptFormat.ts). Transient failures (connection errors, timeouts, 408/409/429/5xx,
 * replies that are not a completion) are retried a bounded number of times with exponential backoff;
 * then, or on any other HTTP error, the call fails with a `policy_unavailable` infrastructure error. The
 * API key is read from the environment and never appears in messages.
 */
import { APIConnectionError, APIError, APIUserAbortError } from 'openai';
import { setTimeout as sleep } from 'node:timers/promises';
import { errorMessage, InfrastructureError } from '../errors';
import { createClient } from './openaiClient';
import { DEFAULT_MAX_TOKENS } from './prompt';
import { createPromptBuilder, type PromptBuilder } from './promptBudget';
import { webrlLlama3Format } from './promptFormat';
import type { Policy, PolicyInput, PolicyOutput } from './policy';

export interface OpenAIPolicyOptions {
  /** e.g. http://127.0.0.1:8000/v1 */
  baseURL: string;
  model: string;
  temperature?: number;
  /**
   * Nucleus and top-k sampling, always sent (1 and -1: off) so that a server which fills unsent values
   * from the model's generation_config (vLLM does) samples the same way for every model.
   */
  topP?: number;
  topK?: number;
  maxTokens?: number;
  /** How the prompt is written and kept within the model's context (default: webrl-llama3, its character budget only). */
  prompts?: PromptBuilder;
  /** Default: the prompt format's end of turn. */
  stop?: string[];
  /** Per request. */
  timeoutMs?: number;
  /** Tries per round, the first included. */
  maxAttempts?: number;
  /** Backoff before retry k is retryDelayMs * 2^(k-1). */
  retryDelayMs?: number;
  /** The environment variable holding the key; servers without auth accept the placeholder sent when unset. */
  apiKeyEnv?: string;
}

const RETRIED_STATUSES = new Set([408, 409, 429]);

class MalformedReply extends Error {
  override name = 'MalformedReply';
}

function isRetryable(error: unknown): boolean {
  if (error instanceof APIUserAbortError) return false;
  if (error instanceof APIConnectionError || error instanceof MalformedReply || error instanceof SyntaxError) return true;
  if (error instanceof APIError) return error.status === undefined || RETRIED_STATUSES.has(error.status) || error.status >= 500;
  return false;
}

/** The generated text of a completion reply, checked field by field (servers vary). */
function completionText(reply: unknown): string {
  const choices = (reply as { choices?: unknown } | null)?.choices;
  if (!Array.isArray(choices) || choices.length === 0) throw new MalformedReply('the reply has no choices');
  const text = (choices[0] as { text?: unknown } | null)?.text;
  if (typeof text !== 'string') throw new MalformedReply('the first choice has no text');
  return text;
}

export function createOpenAIPolicy(options: OpenAIPolicyOptions): Policy {
  const maxAttempts = Math.max(1, options.maxAttempts ?? 3);
  const retryDelayMs = options.retryDelayMs ?? 1000;
  // The client's own retries are off: ours retry malformed replies too, and the count is one number.
  const client = createClient({
    baseURL: options.baseURL,
    model: options.model,
    apiKeyEnv: options.apiKeyEnv,
    timeoutMs: options.timeoutMs,
  });
  const prompts = options.prompts ?? createPromptBuilder(webrlLlama3Format);
  const body = {
    model: options.model,
    temperature: options.temperature ?? 0,
    top_p: options.topP ?? 1,
    // vLLM's extension of the completions request; -1 turns top-k off.
    top_k: options.topK ?? -1,
    max_tokens: options.maxTokens ?? DEFAULT_MAX_TOKENS,
    stop: options.stop ?? [prompts.format.endOfTurn],
  };

  async function complete(prompt: string, signal: AbortSignal | undefined): Promise<string> {
    let lastError: unknown;
    let attempts = 0;
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      attempts = attempt;
      if (attempt > 1) await sleep(retryDelayMs * 2 ** (attempt - 2), undefined, { signal });
      try {
        const reply: unknown = await client.completions.create({ ...body, prompt }, { signal });
        return completionText(reply);
      } catch (error) {
        if (signal?.aborted) throw error;
        lastError = error;
        if (!isRetryable(error)) break;
      }
    }
    const status = lastError instanceof APIError && lastError.status !== undefined ? ` (HTTP ${lastError.status})` : '';
    throw new InfrastructureError(
      'policy_unavailable',
      `completion from ${options.baseURL} (model ${options.model}) failed after ${attempts} attempt(s)${status}: ${errorMessage(lastError)}`,
      { cause: lastError },
    );
  }

  return {
    name: 'openai',
    async act({ task, observation, history, signal }: PolicyInput): Promise<PolicyOutput> {
      const { prompt, observationCut } = await prompts.build(
        task.intent,
        history.map((h) => h.response),
        observation.html,
      );
      return { response: await complete(prompt, signal), prompt, observationCut };
    },
  };
}
