/**
 * Starts and stops the four embedded sites, each on its own port, all in this process and all over
 * the same seeded world.
 */
import { neverStore } from '../config/secrets';
import { randomBytes } from 'node:crypto';
import { startSiteServer, type RunningSite, type SiteAccount, type SiteApp } from './http/siteServer';
import { credentialVariables } from './loginForms';
import { EMBEDDED_SITE_NAMES, type EmbeddedSiteName, type SiteUrls } from './siteUrls';
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
  /** Serve as standalone sites (shared state, login, reset) with these accounts (see `standaloneAccounts`). */
  standalone?: { accounts: Record<EmbeddedSiteName, SiteAccount>; log?(line: string): void };
}

/** The user each embedded site shows as signed in: the accounts of WebArena's sites. */
export const EMBEDDED_USERNAMES: Record<EmbeddedSiteName, string> = {
  shopping: 'emma.lopez@gmail.com',
  shopping_admin: 'admin',
  reddit: 'MarvelsGrantMan136',
  gitlab: 'byteblaze',
};

/**
 * The standalone sites' accounts: from `WEBRL_<SITE>_USERNAME` / `WEBRL_<SITE>_PASSWORD` where set,
 * else the site's user with a random password; `generated` names the sites whose password was made up.
 */
export function standaloneAccounts(env: NodeJS.ProcessEnv): { accounts: Record<EmbeddedSiteName, SiteAccount>; generated: EmbeddedSiteName[] } {
  const generated: EmbeddedSiteName[] = [];
  const accounts = Object.fromEntries(
    EMBEDDED_SITE_NAMES.map((site) => {
      const names = credentialVariables(site);
      let password = env[names.password];
      if (!password) {
        password = randomBytes(9).toString('base64url');
        generated.push(site);
      }
      neverStore(password);
      return [site, { username: env[names.username] || EMBEDDED_USERNAMES[site], password }];
    }),
  ) as Record<EmbeddedSiteName, SiteAccount>;
  return { accounts, generated };
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
    const standalone = options.standalone
      ? { account: options.standalone.accounts[name], ...(options.standalone.log ? { log: options.standalone.log } : {}) }
      : undefined;
    try {
      started.push(await startSiteServer(app, { ...listen, ...(standalone ? { standalone } : {}) }));
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
    // A standalone shop's REST API takes its back-office account, as one Magento install would.
    const restAdmin = options.standalone?.accounts.shopping_admin;
    await start('shopping', createShoppingApp(world.shopping, restAdmin));
    await start('shopping_admin', createAdminApp(world.admin, restAdmin));
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
