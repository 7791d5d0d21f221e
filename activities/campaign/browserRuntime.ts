/**
 * What a browser worker holds for its activities: one Chromium with a pool of contexts, the addresses
 * its own sites take (`config.sites`), and what the environment backends keep per worker (the embedded
 * backend's sites, a `webarena` section's sessions, a server of pages).
 */
import { BrowserPool } from '../../browser/pool';
import type { BrowserContext } from 'playwright-core';
import type { Config } from '../../config/campaignConfig';
import type { WorkerResources } from '../../env/backends/contract';

export class BrowserRuntime implements WorkerResources {
  /** What the environment backends keep per worker. */
  private readonly kept = new Map<string, unknown>();

  private constructor(
    readonly pool: BrowserPool,
    readonly siteAddresses: Config['sites'],
  ) {}

  static async start(config: Config): Promise<BrowserRuntime> {
    const pool = await BrowserPool.start({
      ...(config.concurrency.browserContexts > 0 ? { size: config.concurrency.browserContexts } : {}),
    });
    return new BrowserRuntime(pool, config.sites);
  }

  openContext(): Promise<BrowserContext> {
    return this.pool.openContext();
  }

  shared<T>(key: string, create: () => T): T {
    if (!this.kept.has(key)) this.kept.set(key, create());
    return this.kept.get(key) as T;
  }

  async close(): Promise<void> {
    await this.pool.close();
    // What a backend kept with a close() (its sites, a server of its own) stops with the worker.
    for (const value of this.kept.values()) {
      const kept = (await Promise.resolve(value).catch(() => undefined)) as { close?: unknown } | undefined;
      if (typeof kept?.close === 'function') await (kept.close as () => Promise<void>)();
    }
    this.kept.clear();
  }
}
