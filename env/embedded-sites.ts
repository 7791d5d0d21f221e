/**
 * Starts and stops the four embedded sites, each on its own port, all in this process and all over
 * the same seeded world.
 */
import { startSiteServer, type RunningSite, type SiteApp } from './http/site-server';
import { EMBEDDED_SITE_NAMES, type EmbeddedSiteName, type SiteUrls } from './site-urls';
import { createGitlabApp } from './sites/gitlab/app';
import { createRedditApp } from './sites/reddit/app';
import { createAdminApp } from './sites/shopping-admin/app';
import { createShoppingApp } from './sites/shopping/app';
import { buildWorld, DEFAULT_SEED } from './world';

export interface EmbeddedSitesOptions {
  seed?: number;
  host?: string;
  /** Port per site; 0 or absent picks a free port. */
  ports?: Partial<Record<EmbeddedSiteName, number>>;
  /** How the caller's user gives a site another port, for the message when its port is held. */
  portSetting?(site: EmbeddedSiteName): string;
}

export interface EmbeddedSites {
  seed: number;
  sites: Record<EmbeddedSiteName, RunningSite>;
  /** What the placeholders `__SHOPPING__`, ... resolve to. */
  urls: Required<Pick<SiteUrls, EmbeddedSiteName>>;
  stop(): Promise<void>;
}

export async function startEmbeddedSites(options: EmbeddedSitesOptions = {}): Promise<EmbeddedSites> {
  const seed = options.seed ?? DEFAULT_SEED;
  const world = buildWorld(seed);
  const started: RunningSite[] = [];
  const start = async <S>(name: EmbeddedSiteName, app: SiteApp<S>) => {
    const listen = { host: options.host, port: options.ports?.[name] ?? 0 };
    try {
      started.push(await startSiteServer(app, listen));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
      const fix = options.portSetting ? ` (${options.portSetting(name)})` : '';
      throw new Error(
        `the embedded ${name} site cannot listen on ${listen.host ?? '127.0.0.1'}:${listen.port}: another process holds that port; stop it or give the site another port${fix}`,
        { cause: error },
      );
    }
  };
  try {
    await start('shopping', createShoppingApp(world.shopping));
    await start('shopping_admin', createAdminApp(world.admin));
    await start('reddit', createRedditApp(world.reddit));
    await start('gitlab', createGitlabApp(world.gitlab));
  } catch (error) {
    await Promise.all(started.map((site) => site.stop()));
    throw error;
  }
  const sites = Object.fromEntries(started.map((site) => [site.name, site])) as Record<EmbeddedSiteName, RunningSite>;
  const urls = Object.fromEntries(EMBEDDED_SITE_NAMES.map((name) => [name, sites[name].url])) as EmbeddedSites['urls'];
  return { seed, sites, urls, stop: async () => void (await Promise.all(started.map((site) => site.stop()))) };
}
