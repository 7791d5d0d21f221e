/**
 * Riding out a Temporal or storage outage: long-running processes (the main job, `webrl worker`) keep
 * waiting for a server that stopped answering instead of exiting, say so once in plain words, say
 * when it is back, and give up only after the outage limit.
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { Log } from './tools';

/** gRPC status codes of a server that is down or does not answer in time. */
const GRPC_UNAVAILABLE = 14;
const GRPC_DEADLINE_EXCEEDED = 4;
const UNREACHABLE_MESSAGE =
  /failed to connect|connection refused|ECONNREFUSED|ECONNRESET|transport error|socket hang up|\bUNAVAILABLE\b|\bDEADLINE_EXCEEDED\b/i;

/** Which server an error says is unreachable, or undefined when it is some other failure. */
export function unreachableServer(error: unknown): 'Temporal' | 'storage' | undefined {
  for (let e = error as { name?: string; code?: unknown; message?: string; cause?: unknown } | undefined; e; e = e.cause as typeof e) {
    if (e.name === 'StorageTransientError') return 'storage';
    if (e.code === GRPC_UNAVAILABLE || e.code === GRPC_DEADLINE_EXCEEDED) return 'Temporal';
    if (e.name === 'TransportError' || (typeof e.message === 'string' && UNREACHABLE_MESSAGE.test(e.message))) {
      return 'Temporal';
    }
  }
  return undefined;
}

export class OutageTooLongError extends Error {
  override name = 'OutageTooLongError';
}

/** Tracks the outages of the servers a process depends on and tells the user about each once. */
export class OutageWatch {
  private readonly since = new Map<string, number>();

  constructor(
    private readonly log: Log,
    /** How long an outage may last before the process gives up. */
    readonly limitMs: number,
    private readonly describe: (server: 'Temporal' | 'storage') => string,
    private readonly now: () => number = Date.now,
  ) {}

  /** Records that `server` does not answer; throws once it has not answered for longer than the limit. */
  down(server: 'Temporal' | 'storage'): void {
    const since = this.since.get(server);
    if (since === undefined) {
      this.since.set(server, this.now());
      this.log(
        `${this.describe(server)} does not answer; waiting for it to come back and carrying on then ` +
          `(giving up after ${Math.round(this.limitMs / 1000)} s: --outage-limit)`,
      );
    } else if (this.now() - since > this.limitMs) {
      throw new OutageTooLongError(`${this.describe(server)} has not answered for ${Math.round((this.now() - since) / 1000)} s; giving up (--outage-limit)`);
    }
  }

  /** Records that `server` answered; after an outage, says it is back. */
  up(server: 'Temporal' | 'storage'): void {
    const since = this.since.get(server);
    if (since === undefined) return;
    this.since.delete(server);
    this.log(`${this.describe(server)} is back after ${Math.round((this.now() - since) / 1000)} s`);
  }

  /** Whether any server is down now. */
  get anyDown(): boolean {
    return this.since.size > 0;
  }
}

/**
 * Runs `start` again whenever it fails because a server is unreachable (after a pause that grows to
 * `maxPauseMs`), until `signal` aborts; any other failure, or an outage past the limit, is thrown.
 */
export async function keepRunning(start: () => Promise<void>, outages: OutageWatch, signal: AbortSignal, maxPauseMs = 2_000): Promise<void> {
  let pauseMs = 500;
  while (!signal.aborted) {
    try {
      await start();
      return;
    } catch (error) {
      const server = unreachableServer(error);
      if (!server || signal.aborted) throw error;
      outages.down(server);
      await delay(pauseMs, undefined, { signal }).catch(() => undefined);
      pauseMs = Math.min(pauseMs * 2, maxPauseMs);
    }
  }
}

/**
 * Asks storage every `everyMs` whether it answers, until `signal` aborts, so an outage is told even
 * while no activity of this process happens to touch storage.
 */
export async function watchStorage(check: () => Promise<void>, outages: OutageWatch, signal: AbortSignal, everyMs = 5_000): Promise<void> {
  while (!signal.aborted) {
    try {
      await check();
      outages.up('storage');
    } catch (error) {
      if (unreachableServer(error) === 'storage') outages.down('storage');
    }
    await delay(everyMs, undefined, { signal }).catch(() => undefined);
  }
}
