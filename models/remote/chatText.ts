/**
 * One chat completion's text, with bounded retries for transport failures and replies that carry no
 * text; and the JSON inside a model's free-form answer (a ```json block, or the outermost [...] / {...}).
 * Whether that JSON means anything is the caller's business: garbage is reported, not thrown.
 */
import type OpenAI from 'openai';
import { describeEndpoint, type EndpointOptions } from '../../browser/policies/openaiClient';
import { MalformedReplyError, requestSignal, withRetries, type RetryOptions } from './retry';

export interface ChatOptions extends EndpointOptions, RetryOptions {
  temperature?: number;
  /** Passed to servers that support seeded sampling. */
  seed?: number;
  maxTokens?: number;
}

export async function chatText(client: OpenAI, options: ChatOptions, system: string, user: string, purpose: string): Promise<string> {
  return withRetries(
    `${purpose} from ${describeEndpoint(options)}`,
    async () => {
      const reply: unknown = await client.chat.completions.create(
        {
          model: options.model,
          messages: [
            { role: 'system', content: system },
            { role: 'user', content: user },
          ],
          temperature: options.temperature ?? 0,
          ...(options.seed !== undefined ? { seed: options.seed } : {}),
          // OpenAI's reasoning models refuse max_tokens; vLLM and OpenAI both take max_completion_tokens.
          ...(options.maxTokens !== undefined ? { max_completion_tokens: options.maxTokens } : {}),
        },
        { signal: requestSignal(options.signal) },
      );
      const content = (reply as { choices?: { message?: { content?: unknown } }[] })?.choices?.[0]?.message?.content;
      if (typeof content !== 'string') throw new MalformedReplyError('the reply has no choices[0].message.content');
      return content;
    },
    options,
  );
}

export type JsonExtraction = { ok: true; value: unknown } | { ok: false; reason: string };

export function extractJson(text: string): JsonExtraction {
  const fenced = /```(?:json)?\s*\n?([\s\S]*?)```/i.exec(text)?.[1];
  const source = fenced ?? text;
  const start = source.search(/[[{]/);
  if (start < 0) return { ok: false, reason: 'no JSON array or object in the reply' };
  const close = source[start] === '[' ? ']' : '}';
  const end = source.lastIndexOf(close);
  if (end < start) return { ok: false, reason: `the JSON starting at offset ${start} is not closed` };
  try {
    return { ok: true, value: JSON.parse(source.slice(start, end + 1)) };
  } catch (error) {
    return { ok: false, reason: `invalid JSON: ${(error as Error).message}` };
  }
}

/** The start of a reply, for failure records (long replies are cut). */
export function excerpt(text: string, length = 500): string {
  return text.length > length ? `${text.slice(0, length)}...` : text;
}
