/**
 * The one OpenAI-compatible client: every remote backend and the completions policy
 * (browser/policies/openai.ts) build theirs here. The key comes from the worker's secrets or an
 * environment variable (never from a file, never logged), the SDK's own retries are off because the
 * callers count theirs (`withRetries`, the policy's loop), and each request has a timeout.
 */
import OpenAI from 'openai';
import type { Secret } from '../../config/secrets';

export interface EndpointOptions {
  /** e.g. http://127.0.0.1:8000/v1 */
  baseURL: string;
  model: string;
  /** The environment variable holding the API key (default OPENAI_API_KEY); keyless servers get a placeholder. */
  apiKeyEnv?: string;
  /** The key itself (from config/secrets.ts); wins over `apiKeyEnv`. */
  apiKey?: Secret;
  /** Per request (default 120 s). */
  timeoutMs?: number;
}

export function createClient(options: EndpointOptions): OpenAI {
  return new OpenAI({
    baseURL: options.baseURL,
    apiKey: options.apiKey?.reveal() || process.env[options.apiKeyEnv ?? 'OPENAI_API_KEY'] || 'EMPTY',
    timeout: options.timeoutMs ?? 120_000,
    maxRetries: 0,
  });
}

/** `what` for error messages: the endpoint and model, nothing secret. */
export function describeEndpoint(options: EndpointOptions): string {
  return `${options.baseURL} (model ${options.model})`;
}
