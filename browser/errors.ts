/**
 * Infrastructure failures: the browser, the page, the environment or the model endpoint broke, not the
 * agent. An episode that ends with one is reported as such so the caller retries it.
 */
export type InfrastructureReason =
  | 'browser_crashed'
  | 'browser_unavailable'
  | 'page_crashed'
  | 'step_timeout'
  | 'browser_error'
  | 'environment_error'
  | 'evaluation_error'
  | 'policy_unavailable'
  | 'trace_write_failed';

export class InfrastructureError extends Error {
  override name = 'InfrastructureError';
  constructor(
    readonly reason: InfrastructureReason,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message.split('\n')[0]! : String(error);
}

/** Rejects with a `step_timeout` infrastructure error when `promise` takes longer than `ms`. */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new InfrastructureError('step_timeout', `${what} took longer than ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
