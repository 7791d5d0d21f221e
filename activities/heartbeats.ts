/**
 * Heartbeats from a timer, for every activity with a heartbeat timeout, for as long as it runs: a step
 * that sends none of its own (loading a task split, preparing pages, writing a dataset, staging a model)
 * never looks like a dead worker, however long a loaded machine makes it. Each beat carries the
 * progress the activity last reported (`heartbeat`, `withHeartbeats`), so progress bars never reset.
 */
import { Context } from '@temporalio/activity';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';

/** What each running activity last reported, read at every beat. */
const progressOf = new WeakMap<Context, () => unknown>();

/** The longest gap between timer beats; shorter for a short heartbeat timeout (a quarter of it). */
const MAX_BEAT_INTERVAL_MS = 5_000;

export function beatIntervalMs(heartbeatTimeoutMs: number): number {
  return Math.max(100, Math.min(MAX_BEAT_INTERVAL_MS, heartbeatTimeoutMs / 4));
}

/** Reports the activity's progress: a heartbeat now, and the timer's beats repeat it until the next report. */
export function heartbeat(details: unknown): void {
  const context = Context.current();
  progressOf.set(context, () => details);
  context.heartbeat(details);
}

/** A heartbeat now with the progress `withHeartbeats` reads (after the progress it reads has changed). */
export function beatNow(): void {
  const context = Context.current();
  context.heartbeat(progressOf.get(context)?.());
}

/** While `work` runs, every beat reads its progress from `details` (a heartbeat now, so watchers see it at once). */
export async function withHeartbeats<T>(details: () => unknown, work: Promise<T>): Promise<T> {
  const context = Context.current();
  const before = progressOf.get(context);
  progressOf.set(context, details);
  context.heartbeat(details());
  try {
    return await work;
  } finally {
    if (before) progressOf.set(context, before);
    else progressOf.delete(context);
  }
}

/** The worker's activity interceptor that beats on a timer (installed by workers/factory.ts). */
export const timerHeartbeats: ActivityInterceptorsFactory = (context) => ({
  inbound: {
    async execute(input, next) {
      const timeoutMs = context.info.heartbeatTimeoutMs;
      if (!timeoutMs) return next(input);
      const timer = setInterval(() => context.heartbeat(progressOf.get(context)?.()), beatIntervalMs(timeoutMs));
      try {
        return await next(input);
      } finally {
        clearInterval(timer);
      }
    },
  },
});
