/**
 * What a browser worker holds for its activities: one Chromium with a pool of contexts, and the
 * embedded sites, started on first use with the campaign's world seed on the worker's configured ports
 * (fixed ports keep observations, and so rollouts, identical across worker restarts).
 */
import { BrowserPool } from '../../browser/pool';
import type { BrowserContext } from 'playwright-core';
import type { Config } from '../../config/campaignConfig';
import type { WorkerResources } from '../../env/backends/contract';
import { startEmbeddedSites, type EmbeddedSites } from '../../env/embeddedSites';

export class BrowserRuntime implements WorkerResources {
  private sites?: Promise<EmbeddedSites>;
  private worldSeed?: number;
  /** What the environment backends keep per worker (a `webarena` section's sessions, caps, counters). */
  private readonly kept = new Map<string, unknown>();

  private constructor(
    readonly pool: BrowserPool,
    private readonly config: Config,
  ) {}

  static async start(config: Config): Promise<BrowserRuntime> {
    const pool = await BrowserPool.start({
      ...(config.concurrency.browserContexts > 0 ? { size: config.concurrency.browserContexts } : {}),
    });
    return new BrowserRuntime(pool, config);
  }

  /** The running sites for `worldSeed`; one world per worker. */
  embeddedSites(worldSeed: number): Promise<EmbeddedSites> {
    if (this.sites && this.worldSeed !== worldSeed) {
      return Promise.reject(new Error(`this browser worker serves the embedded world of seed ${this.worldSeed}, not ${worldSeed}; run a worker per world`));
    }
    this.worldSeed = worldSeed;
    if (!this.sites) {
      const starting = startEmbeddedSites({
        seed: worldSeed,
        host: this.config.sites.host,
        ports: this.config.sites.ports,
        portSetting: (site) => `webrl campaign run / webrl worker --site-ports ${site}=PORT, or sites.ports.${site} in the campaign file`,
      });
      // A start that failed (a port held for a while) is not kept: the activity's retry starts again.
      starting.catch(() => {
        if (this.sites === starting) this.sites = undefined;
      });
      this.sites = starting;
    }
    return this.sites;
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
    await (await this.sites)?.stop();
    // What a backend kept with a close() (a server of its own) stops with the worker.
    for (const value of this.kept.values()) {
      const kept = (await Promise.resolve(value).catch(() => undefined)) as { close?: unknown } | undefined;
      if (typeof kept?.close === 'function') await (kept.close as () => Promise<void>)();
    }
    this.kept.clear();
  }
}
