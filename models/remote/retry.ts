/**
 * Bounded retries for remote model calls. Transient failures (connection errors, timeouts, HTTP
 * 408/409/429/5xx, replies that are not the expected shape) are retried with exponential backoff up to
 * `maxAttempts` tries in all; any other HTTP error fails at once. The final error is a RemoteModelError
 * naming the endpoint, the attempts and the last cause; messages never include API keys.
 */
import { APIError, APIUserAbortError } from 'openai';
import { setTimeout as sleep } from 'node:timers/promises';

export interface RetryOptions {
  /** Tries in all, the first included (default 3). */
  maxAttempts?: number;
  /** Backoff before retry k is retryDelayMs * 2^(k-1) (default 500). */
  retryDelayMs?: number;
  signal?: AbortSignal;
}

/**
 * The signal one request of the openai client gets: a child of the caller's. The client adds an abort
 * listener to the signal it is given and never takes it off, so handing it an activity's long-lived
 * signal kept one listener per request for the activity's life (Node warned past 10); the child goes
 * with its request.
 */
export function requestSignal(signal: AbortSignal | undefined): AbortSignal | undefined {
  return signal && AbortSignal.any([signal]);
}

/** A reply that arrived but is not what the protocol promises (retried: servers do recover). */
export class MalformedReplyError extends Error {
  override name = 'MalformedReplyError';
}

/** An HTTP status from a non-OpenAI endpoint (the critic protocol). */
export class HttpStatusError extends Error {
  override name = 'HttpStatusError';
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export class RemoteModelError extends Error {
  override name = 'RemoteModelError';
  constructor(
    message: string,
    readonly attempts: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

const RETRIED_STATUSES = new Set([408, 409, 429]);

function statusOf(error: unknown): number | undefined {
  if (error instanceof HttpStatusError) return error.status;
  if (error instanceof APIError) return error.status;
  return undefined;
}

function isRetryable(error: unknown): boolean {
  if (error instanceof APIUserAbortError) return false;
  if (error instanceof MalformedReplyError || error instanceof SyntaxError) return true;
  const status = statusOf(error);
  if (error instanceof APIError || error instanceof HttpStatusError) return status === undefined || RETRIED_STATUSES.has(status) || status >= 500;
  // fetch() network failures and our own per-request timeouts.
  return error instanceof TypeError || (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError'));
}

/**
 * Whether a failed call says the server, not the item, is the problem: unreachable, timing out,
 * answering 5xx, or no longer serving the model (404: an adapter a restarted vLLM lost). Such a failure
 * fails the whole activity, which is retried, instead of being recorded against the item.
 */
export function isServerUnavailable(error: unknown): boolean {
  const cause = error instanceof RemoteModelError ? error.cause : error;
  if (cause instanceof MalformedReplyError || cause instanceof SyntaxError || cause instanceof APIUserAbortError) return false;
  const status = statusOf(cause);
  if (status !== undefined) return status >= 500 || status === 404;
  return isRetryable(cause);
}

function describeError(error: unknown): string {
  const status = statusOf(error);
  const message = error instanceof Error ? error.message.split('\n')[0]! : String(error);
  return status !== undefined && !message.includes(String(status)) ? `HTTP ${status}: ${message}` : message;
}

export async function withRetries<T>(what: string, call: () => Promise<T>, options: RetryOptions = {}): Promise<T> {
  const maxAttempts = Math.max(1, options.maxAttempts ?? 3);
  const retryDelayMs = options.retryDelayMs ?? 500;
  let lastError: unknown;
  let attempt = 0;
  while (attempt < maxAttempts) {
    attempt++;
    if (attempt > 1) await sleep(retryDelayMs * 2 ** (attempt - 2), undefined, { signal: options.signal });
    try {
      return await call();
    } catch (error) {
      if (options.signal?.aborted) throw error;
      lastError = error;
      if (!isRetryable(error)) break;
    }
  }
  throw new RemoteModelError(`${what} failed after ${attempt} attempt(s): ${describeError(lastError)}`, attempt, { cause: lastError });
}
