/**
 * Runs activity functions directly, inside an activity context (as @temporalio/testing's
 * MockActivityEnvironment does; that package is not a dependency here): never cancelled, heartbeats
 * handed to `onHeartbeat`, logs dropped.
 */
import { asyncLocalStorage, Context } from '@temporalio/activity';

export type ActivityRunner = <A extends unknown[], R>(fn: (...args: A) => Promise<R>, ...args: A) => Promise<R>;

export function activityRunner(onHeartbeat: (details: unknown) => void = () => {}): ActivityRunner {
  return (fn, ...args) => {
    const ContextClass = Context as unknown as new (...parts: unknown[]) => Context;
    const logger = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };
    const context = new ContextClass(
      { activityType: fn.name, attempt: 1, taskQueue: 'test' },
      new Promise<never>(() => {}),
      new AbortController().signal,
      onHeartbeat,
      undefined,
      logger,
    );
    return asyncLocalStorage.run(context, () => fn(...args));
  };
}
