/**
 * The embedded sites as a separate deployment, the way the `webarena` backend meets real sites:
 * `webrl env serve --random-ports` in its own process with accounts from the environment, its URLs
 * read from what it prints, and each site's server-side counters (`/__webrl/health`).
 */
import { randomBytes } from 'node:crypto';
import { createServer, connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { EMBEDDED_SITE_NAMES, type EmbeddedSiteName } from '../../env/siteUrls';
import { credentialVariables } from '../../env/loginForms';
import { EMBEDDED_USERNAMES } from '../../env/embeddedSites';
import { startWebrl, type RunningWebrl } from './cli';
import { parseConfig } from '../../config/load';
import type { WebArenaConfig } from '../../env/backends/webarena/settings';

export interface ServedSites {
  urls: Record<EmbeddedSiteName, string>;
  origins: Record<EmbeddedSiteName, string>;
  /** The accounts' variables and values, for the worker's environment. */
  credentials: Record<string, string>;
  passwords: string[];
  process: RunningWebrl;
  health(site: EmbeddedSiteName): Promise<{ logins: number; resets: number; changedRows: number }>;
  /** The reset hooks a config can name for a site: a POST to its reset endpoint, or curl doing it. */
  resetHook(site: EmbeddedSiteName, kind: 'http' | 'command'): Record<string, unknown>;
  stop(): Promise<void>;
}

export async function serveSites(): Promise<ServedSites> {
  const credentials: Record<string, string> = {};
  for (const site of EMBEDDED_SITE_NAMES) {
    const variables = credentialVariables(site);
    credentials[variables.username] = EMBEDDED_USERNAMES[site];
    credentials[variables.password] = `pw-${site}-${randomBytes(6).toString('hex')}`;
  }
  const served = startWebrl(['env', 'serve', '--random-ports'], { env: { ...process.env, ...credentials } });
  await served.waitFor(/gitlab\s+http:\/\/\S+/, 60_000);
  const urls = {} as Record<EmbeddedSiteName, string>;
  const origins = {} as Record<EmbeddedSiteName, string>;
  for (const site of EMBEDDED_SITE_NAMES) {
    const url = new RegExp(`^\\s+${site}\\s+(http://\\S+)`, 'm').exec(served.output())?.[1];
    if (!url) throw new Error(`env serve printed no URL for ${site}:\n${served.output()}`);
    urls[site] = url;
    origins[site] = new URL(url).origin;
  }
  return {
    urls,
    origins,
    credentials,
    passwords: EMBEDDED_SITE_NAMES.map((site) => credentials[credentialVariables(site).password]!),
    process: served,
    async health(site) {
      const response = await fetch(`${origins[site]}/__webrl/health`);
      return (await response.json()) as { logins: number; resets: number; changedRows: number };
    },
    resetHook(site, kind) {
      const url = `${origins[site]}/__webrl/reset`;
      return kind === 'http' ? { http: { url } } : { command: `curl -sf -X POST ${url} > /dev/null` };
    },
    async stop() {
      served.signal('SIGTERM');
      await served.exited;
    },
  };
}

/** The `campaign.environment.webarena.sites` entries for served sites (URLs; resets and caps added by the caller). */
export function servedSiteSettings(served: ServedSites, extra: (site: EmbeddedSiteName) => Record<string, unknown> = () => ({})): Record<string, unknown> {
  return Object.fromEntries(EMBEDDED_SITE_NAMES.map((site) => [site, { url: served.urls[site], ...extra(site) }]));
}

/**
 * The `webarena` settings for served sites, with one task file for both splits and a health check
 * that names a dead site quickly (served sites answer at once); `settings` adds to or replaces them.
 */
export function servedWebArenaConfig(
  served: ServedSites,
  taskFile: string,
  sites: (site: EmbeddedSiteName) => Record<string, unknown> = () => ({}),
  settings: Record<string, unknown> = {},
): WebArenaConfig {
  const webarena = {
    sites: servedSiteSettings(served, sites),
    tasks: { train: { path: taskFile }, test: { path: taskFile } },
    healthCheck: { attempts: 2, intervalSeconds: 0.2, timeoutSeconds: 5 },
    ...settings,
  };
  const environment = parseConfig({ campaign: { phase: { curriculum: false }, environment: { backend: 'webarena', webarena } } }).campaign.environment;
  if (environment.backend !== 'webarena') throw new Error('a webarena environment parses to the webarena backend');
  return environment.webarena;
}

/** A site reached through a relay the test can take down and bring back on the same port: an outage. */
export interface InterruptibleSite {
  /** The site's URL through the relay. */
  url: string;
  down(): Promise<void>;
  up(): Promise<void>;
}

export async function interruptibleSite(target: string): Promise<InterruptibleSite> {
  const upstream = new URL(target);
  const sockets = new Set<Socket>();
  const relay = createServer((client) => {
    const site = connect(Number(upstream.port), upstream.hostname);
    for (const socket of [client, site]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => (socket === client ? site : client).destroy());
    }
    client.pipe(site).pipe(client);
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  const port = (relay.address() as AddressInfo).port;
  const url = new URL(target);
  url.host = `127.0.0.1:${port}`;
  return {
    url: url.toString().replace(/\/$/, target.endsWith('/') ? '/' : ''),
    async down() {
      const closed = new Promise<void>((resolve) => relay.close(() => resolve()));
      // Open keep-alive connections would outlive the listener: a site that is down answers nothing.
      for (const socket of sockets) socket.destroy();
      await closed;
    },
    up: () => new Promise<void>((resolve) => relay.listen(port, '127.0.0.1', resolve)),
  };
}
