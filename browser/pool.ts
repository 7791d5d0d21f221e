/**
 * Runs episodes on one Chromium process per pool with N isolated browser contexts at a time (default: the
 * number of cores). Each episode gets a fresh context (cookies and storage never leak between episodes)
 * that is closed afterwards; callers beyond N wait for a free slot (backpressure). If Chromium dies, the
 * episodes in flight end as infrastructure failures, the next episode relaunches it and the rest run on.
 * A context that will not close within a bound means a hung browser: it is killed and relaunched.
 */
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';
import { CHROMIUM_ARGS, ensureChromium } from '../infra/tools';
import { errorMessage, InfrastructureError, withTimeout } from './errors';
import { runEpisode, unstartedEpisode, type EpisodeRequest, type EpisodeResult } from './episode';
import { VIEWPORT } from './observe';

export interface PoolOptions {
  /** Episodes at once (browser contexts); default: the number of cores. */
  size?: number;
  /** Chromium executable; default: ensureChromium(). */
  executablePath?: string;
  launchTimeoutMs?: number;
  /** Bound on creating or closing a context before the browser counts as hung. */
  contextTimeoutMs?: number;
  log?: (message: string) => void;
}

/** A FIFO counting semaphore. */
class Slots {
  private readonly waiting: (() => void)[] = [];
  constructor(private free: number) {}

  async acquire(): Promise<() => void> {
    if (this.free > 0) this.free--;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next) next();
      else this.free++;
    };
  }
}

/** The pid of our direct child whose command line carries `marker` (Linux /proc); undefined elsewhere. */
function childProcessWith(marker: string): number | undefined {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return undefined;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (parent === process.pid && readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(marker)) return Number(entry);
    } catch {
      // The process ended while we looked.
    }
  }
  return undefined;
}

export class BrowserPool {
  private browser: Browser | undefined;
  private pid: number | undefined;
  private launching: Promise<Browser> | undefined;
  private launchCount = 0;
  private closed = false;
  private readonly slots: Slots;
  private readonly log: (message: string) => void;
  private readonly launchTimeoutMs: number;
  private readonly contextTimeoutMs: number;

  private constructor(
    readonly size: number,
    private readonly executablePath: string,
    options: PoolOptions,
  ) {
    this.slots = new Slots(size);
    this.log = options.log ?? (() => undefined);
    this.launchTimeoutMs = options.launchTimeoutMs ?? 60_000;
    this.contextTimeoutMs = options.contextTimeoutMs ?? 15_000;
  }

  static async start(options: PoolOptions = {}): Promise<BrowserPool> {
    const size = Math.max(1, options.size ?? availableParallelism());
    const executablePath = options.executablePath ?? (await ensureChromium(options.log)).path;
    const pool = new BrowserPool(size, executablePath, options);
    await pool.currentBrowser();
    return pool;
  }

  /** How many times Chromium was launched (1 + relaunches). */
  get launches(): number {
    return this.launchCount;
  }

  /** The running Chromium's process id, when it can be found. */
  browserPid(): number | undefined {
    return this.browser?.isConnected() ? this.pid : undefined;
  }

  /** Runs one episode in a fresh context once a slot is free; never throws. */
  async runEpisode(request: EpisodeRequest): Promise<EpisodeResult> {
    let leave: (() => void) | undefined;
    try {
      leave = await request.environment.reserve?.(request.task);
    } catch (error) {
      return unstartedEpisode(request, error);
    }
    const release = await this.slots.acquire();
    try {
      if (request.signal?.aborted) return unstartedEpisode(request, new Error('the episode was called off before it started'));
      let context: BrowserContext;
      try {
        context = await this.newContext();
      } catch (error) {
        return unstartedEpisode(request, error);
      }
      const result = await runEpisode(context, request);
      await this.discard(context);
      return result;
    } finally {
      release();
      leave?.();
    }
  }

  /**
   * A context outside the episode slots, for brief chores beside the episodes (signing in to a site);
   * the caller closes it. It never waits for a slot, so an episode's preparation may use one.
   */
  async openContext(): Promise<BrowserContext> {
    return this.newContext();
  }

  /**
   * Runs every request, at most `size` at a time, pulling the next request only when a slot frees up (a
   * lazy or async source is never read ahead). Results come in completion order.
   */
  async runAll(
    requests: Iterable<EpisodeRequest> | AsyncIterable<EpisodeRequest>,
    onResult?: (result: EpisodeResult) => void | Promise<void>,
  ): Promise<EpisodeResult[]> {
    const iterator: Iterator<EpisodeRequest> | AsyncIterator<EpisodeRequest> =
      Symbol.asyncIterator in requests ? requests[Symbol.asyncIterator]() : requests[Symbol.iterator]();
    const results: EpisodeResult[] = [];
    const worker = async () => {
      for (;;) {
        const next = await iterator.next();
        if (next.done) return;
        const result = await this.runEpisode(next.value);
        results.push(result);
        await onResult?.(result);
      }
    };
    await Promise.all(Array.from({ length: this.size }, worker));
    return results;
  }

  async close(): Promise<void> {
    this.closed = true;
    const browser = this.browser ?? (await this.launching?.catch(() => undefined));
    if (!browser?.isConnected()) return;
    await withTimeout(browser.close(), this.contextTimeoutMs, 'closing Chromium').catch(() => this.kill(browser));
  }

  private async currentBrowser(): Promise<Browser> {
    if (this.closed) throw new Error('the browser pool is closed');
    if (this.browser?.isConnected()) return this.browser;
    this.launching ??= this.launch().finally(() => {
      this.launching = undefined;
    });
    return this.launching;
  }

  private async launch(): Promise<Browser> {
    if (this.launchCount > 0) this.log('Chromium is gone; relaunching it');
    // An inert switch that lets us find this Chromium's process to kill it if it hangs.
    const marker = `--webrl-pool=${randomUUID()}`;
    const browser = await chromium.launch({
      executablePath: this.executablePath,
      args: [...CHROMIUM_ARGS, marker],
      timeout: this.launchTimeoutMs,
      // The process that owns the pool decides what a signal means (the main job keeps running to
      // shut its worker down and say so); Playwright's own handlers would exit the process at once.
      // close() ends Chromium, and Chromium ends by itself when its pipe to a dead owner closes.
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false,
    });
    this.launchCount++;
    this.browser = browser;
    this.pid = childProcessWith(marker);
    browser.on('disconnected', () => {
      if (!this.closed) this.log('Chromium disconnected');
    });
    return browser;
  }

  /** A fresh context; a browser that died or hangs meanwhile is replaced and the creation tried once more. */
  private async newContext(): Promise<BrowserContext> {
    for (let attempt = 1; ; attempt++) {
      const browser = await this.currentBrowser();
      try {
        return await withTimeout(browser.newContext({ viewport: VIEWPORT }), this.contextTimeoutMs, 'creating a context');
      } catch (error) {
        const hung = error instanceof InfrastructureError && error.reason === 'step_timeout';
        if (attempt >= 2 || this.closed || (browser.isConnected() && !hung)) throw error;
        this.log(`creating a context failed (${errorMessage(error)}); replacing Chromium`);
        this.kill(browser);
      }
    }
  }

  /** Closes a used context; one that will not close means Chromium hangs, so it is killed. */
  private async discard(context: BrowserContext): Promise<void> {
    const browser = context.browser();
    if (!browser?.isConnected()) return;
    try {
      await withTimeout(context.close(), this.contextTimeoutMs, 'closing a context');
    } catch (error) {
      if (!browser.isConnected()) return;
      this.log(`closing a context failed (${errorMessage(error)}); killing Chromium`);
      this.kill(browser);
    }
  }

  private kill(browser: Browser): void {
    if (browser !== this.browser || !browser.isConnected()) return;
    if (this.pid === undefined) {
      // No process id on this platform: a polite close is all we can do.
      browser.close().catch(() => undefined);
      return;
    }
    try {
      process.kill(this.pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
}
