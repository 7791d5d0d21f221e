/**
 * Counts a prompt's tokens as the served model does, with vLLM's `POST /tokenize` (at the server's root,
 * beside /v1): {model, prompt, add_special_tokens: true} -> {count, max_model_len, tokens}. The count
 * includes the BOS the tokenizer adds, as the completion request's prompt does; `max_model_len` is the
 * context the server was started with.
 */
import { z } from 'zod';
import type { Secret } from '../../config/secrets';
import { HttpStatusError, MalformedReplyError, withRetries, type RetryOptions } from './retry';

export interface TokenCounter {
  count(prompt: string): Promise<number>;
  /** The server's context length (max_model_len). */
  contextTokens(): Promise<number>;
}

export interface TokenCounterOptions extends RetryOptions {
  /** The OpenAI-compatible base URL (…/v1); /tokenize is at the server's root. */
  baseURL: string;
  model: string;
  apiKey?: Secret;
  timeoutMs?: number;
}

const replySchema = z.object({ count: z.number().int().min(0), max_model_len: z.number().int().min(1) });

export function createVllmTokenCounter(options: TokenCounterOptions): TokenCounter {
  const url = `${options.baseURL.replace(/\/+$/, '').replace(/\/v1$/, '')}/tokenize`;
  const key = options.apiKey?.reveal();
  const headers: Record<string, string> = { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) };
  let context: number | undefined;

  async function tokenize(prompt: string): Promise<z.infer<typeof replySchema>> {
    return withRetries(
      `token count from ${url} (model ${options.model})`,
      async () => {
        const timeout = AbortSignal.timeout(options.timeoutMs ?? 60_000);
        const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
        const response = await fetch(url, {
          method: 'POST',
          headers,
          body: JSON.stringify({ model: options.model, prompt, add_special_tokens: true }),
          signal,
        });
        const text = await response.text();
        if (!response.ok) throw new HttpStatusError(response.status, `HTTP ${response.status}: ${text.slice(0, 200)}`);
        const parsed = replySchema.safeParse(JSON.parse(text));
        if (!parsed.success) throw new MalformedReplyError(`the /tokenize reply has no count and max_model_len: ${text.slice(0, 120)}`);
        context = parsed.data.max_model_len;
        return parsed.data;
      },
      options,
    );
  }

  return {
    count: async (prompt) => (await tokenize(prompt)).count,
    contextTokens: async () => context ?? (await tokenize('')).max_model_len,
  };
}
