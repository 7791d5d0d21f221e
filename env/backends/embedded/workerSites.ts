/**
 * The embedded sites a browser worker runs for the embedded backend: one world per worker, started on
 * first use with the campaign's world seed on the worker's configured ports (fixed ports keep
 * observations, and so rollouts, identical across worker restarts), stopped with the worker.
 */
import { startEmbeddedSites, type EmbeddedSites } from '../../embeddedSites';
import type { WorkerResources } from '../contract';

class WorkerSites {
  private sites?: Promise<EmbeddedSites>;
  private worldSeed?: number;

  constructor(private readonly addresses: WorkerResources['siteAddresses']) {}

  of(worldSeed: number): Promise<EmbeddedSites> {
    if (this.sites && this.worldSeed !== worldSeed) {
      return Promise.reject(new Error(`this browser worker serves the embedded world of seed ${this.worldSeed}, not ${worldSeed}; run a worker per world`));
    }
    this.worldSeed = worldSeed;
    if (!this.sites) {
      const starting = startEmbeddedSites({
        seed: worldSeed,
        host: this.addresses.host,
        ports: this.addresses.ports,
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

  async close(): Promise<void> {
    await (await this.sites?.catch(() => undefined))?.stop();
  }
}

/** The worker's embedded sites for `worldSeed`, started on first use. */
export function embeddedSitesOf(workers: WorkerResources, worldSeed: number): Promise<EmbeddedSites> {
  return workers.shared('embedded:sites', () => new WorkerSites(workers.siteAddresses)).of(worldSeed);
}
