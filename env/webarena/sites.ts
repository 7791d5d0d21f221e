/**
 * The sites of a `webarena` campaign as a worker uses them: each configured site's URL, account
 * variables, reset hook and policy, and episode cap; the health check; and the reset hooks.
 */
import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import type { WebArenaConfig, WebArenaSiteSettings } from '../backends/webarena/settings';
import { credentialVariables, LOGIN_FORMS, type LoginForm } from '../loginForms';
import { SITE_NAMES, type SiteName, type SiteUrls } from '../siteUrls';

export interface WebArenaSite {
  name: SiteName;
  url: string;
  /** The sign-in form, for sites that have accounts. */
  form?: LoginForm;
  /** Names of the variables holding the account. */
  credentials: { username: string; password: string };
  reset?: NonNullable<WebArenaSiteSettings['reset']>;
  maxConcurrentEpisodes: number;
}

/** A site that does not answer: named in every message, so the operator knows which one to bring back. */
export class SiteUnavailable extends Error {
  override name = 'SiteUnavailable';
  constructor(
    readonly site: string,
    readonly url: string,
    readonly detail: string,
  ) {
    super(`site ${site} at ${url} is unreachable: ${detail}`);
  }
}

/** The configured sites that have a URL (the config resolved WebArena's variables already). */
export function webArenaSites(config: WebArenaConfig): WebArenaSite[] {
  return SITE_NAMES.flatMap((name) => {
    const settings = config.sites[name];
    if (!settings?.url) return [];
    const defaults = credentialVariables(name);
    const form = LOGIN_FORMS[name];
    return [
      {
        name,
        url: settings.url.replace(/\/+$/, ''),
        ...(form ? { form } : {}),
        credentials: { username: settings.login.usernameEnv ?? defaults.username, password: settings.login.passwordEnv ?? defaults.password },
        ...(settings.reset ? { reset: settings.reset } : {}),
        maxConcurrentEpisodes: settings.maxConcurrentEpisodes ?? config.maxConcurrentEpisodesPerSite,
      },
    ];
  });
}

export function siteUrlsOf(sites: readonly WebArenaSite[]): SiteUrls {
  return Object.fromEntries(sites.map((site) => [site.name, site.url]));
}

/** One request to the site: any answer below 500 means it is up (a redirect to its login page included). */
export async function probeSite(url: string, timeoutSeconds: number): Promise<void> {
  let response: Response;
  try {
    response = await fetch(url, { redirect: 'manual', signal: AbortSignal.timeout(timeoutSeconds * 1000) });
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    throw new Error(cause?.code ?? cause?.message ?? (error as Error).message);
  }
  await response.body?.cancel();
  if (response.status >= 500) throw new Error(`HTTP ${response.status}`);
}

/** Checks every site, each up to `attempts` times; resolves with the ones that stayed down. */
export async function unavailableSites(sites: readonly { name: string; url: string }[], check: WebArenaConfig['healthCheck']): Promise<SiteUnavailable[]> {
  const results = await Promise.all(
    sites.map(async (site) => {
      let detail = '';
      for (let attempt = 1; attempt <= check.attempts; attempt++) {
        try {
          await probeSite(site.url, check.timeoutSeconds);
          return undefined;
        } catch (error) {
          detail = `${(error as Error).message} (${attempt} ${attempt === 1 ? 'try' : 'tries'})`;
          if (attempt < check.attempts) await delay(check.intervalSeconds * 1000);
        }
      }
      return new SiteUnavailable(site.name, site.url, detail);
    }),
  );
  return results.filter((r): r is SiteUnavailable => r !== undefined);
}

const OUTPUT_TAIL = 2000;

/** An env-ctrl reset that failed: the phase waits for an operator, the site named. */
export class EnvCtrlResetFailed extends Error {
  override name = 'EnvCtrlResetFailed';
}

/** One call to a site's env-ctrl service; its JSON answer must say `success`. */
async function envCtrl(site: string, base: string, method: 'GET' | 'POST', path: string, timeoutSeconds: number): Promise<void> {
  const url = `${base.replace(/\/+$/, '')}${path}`;
  const failed = (detail: string) => new EnvCtrlResetFailed(`reset of site ${site}: env-ctrl ${method} ${url}: ${detail}`);
  let response: Response;
  try {
    response = await fetch(url, { method, headers: { accept: 'application/json' }, signal: AbortSignal.timeout(timeoutSeconds * 1000) });
  } catch (error) {
    throw failed((error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message);
  }
  const body = (await response.json().catch(() => undefined)) as { success?: unknown; message?: unknown } | undefined;
  if (body?.success !== true) throw failed(`${typeof body?.message === 'string' ? body.message : 'no success in the answer'} (HTTP ${response.status})`);
}

/** WebArena-Verified's reset: restart the site and wait until it is up, then its status must be healthy. */
async function envCtrlReset(site: string, base: string, timeoutSeconds: number): Promise<void> {
  await envCtrl(site, base, 'POST', '/restart?wait=1', timeoutSeconds);
  await envCtrl(site, base, 'GET', '/status', timeoutSeconds);
}

/** How long a reset hook's probe before the campaign waits for an answer. */
const PROBE_TIMEOUT_MS = 10_000;

/** Whether something listens at the URL's host and port (a connection, no request: a request could reset the site). */
function connects(url: string): Promise<void> {
  const target = new URL(url);
  const port = Number(target.port || (target.protocol === 'https:' ? 443 : 80));
  return new Promise((resolve, reject) => {
    const socket = connect({ host: target.hostname, port, timeout: PROBE_TIMEOUT_MS });
    socket.once('connect', () => {
      socket.destroy();
      resolve();
    });
    socket.once('timeout', () => {
      socket.destroy();
      reject(new Error(`no answer within ${PROBE_TIMEOUT_MS} ms`));
    });
    socket.once('error', (error: NodeJS.ErrnoException) => reject(new Error(error.code ?? error.message)));
  });
}

/** Whether the shell finds the command's program (its first word), without running the command. */
function commandFound(command: string): Promise<void> {
  const program = command.trim().split(/\s+/)[0] ?? '';
  return new Promise((resolve, reject) => {
    const child = spawn('/bin/sh', ['-c', 'command -v -- "$1"', 'sh', program], { stdio: 'ignore' });
    child.once('error', reject);
    child.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`${program} is not a program the shell finds`))));
  });
}

/**
 * Before a campaign starts: every site's reset hook can be reached, without resetting anything (an
 * env-ctrl service answers GET /status; an HTTP hook's server accepts a connection; a command's program
 * exists). One problem per site, naming its hook's field.
 */
export async function resetHookProblems(sites: readonly WebArenaSite[]): Promise<string[]> {
  const problems = await Promise.all(
    sites.map(async (site) => {
      const hook = site.reset?.hook;
      if (!hook) return undefined;
      const field = `campaign.environment.webarena.sites.${site.name}.reset.hook`;
      try {
        if ('command' in hook) await commandFound(hook.command);
        else if ('kind' in hook) await envCtrl(site.name, hook.url, 'GET', '/status', Math.min(hook.timeoutSeconds, PROBE_TIMEOUT_MS / 1000));
        else await connects(hook.http.url);
        return undefined;
      } catch (error) {
        return `${field}: the reset hook cannot be reached: ${(error as Error).message}`;
      }
    }),
  );
  return problems.filter((problem): problem is string => problem !== undefined);
}

/** Runs a site's reset hook; throws naming the site when it fails. Returns how long it took. */
export async function runResetHook(site: WebArenaSite): Promise<number> {
  const hook = site.reset?.hook;
  if (!hook) return 0;
  const started = performance.now();
  if ('command' in hook) {
    await new Promise<void>((resolve, reject) => {
      const child = spawn('/bin/sh', ['-c', hook.command], { stdio: ['ignore', 'pipe', 'pipe'], timeout: hook.timeoutSeconds * 1000 });
      let output = '';
      const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-OUTPUT_TAIL));
      child.stdout.on('data', keep);
      child.stderr.on('data', keep);
      child.once('error', (error) => reject(new Error(`reset of site ${site.name}: ${error.message}`)));
      child.once('close', (code, signal) =>
        code === 0 ? resolve() : reject(new Error(`reset of site ${site.name}: the command exited with ${code ?? signal}: ${output.trim()}`)),
      );
    });
  } else if ('kind' in hook) {
    await envCtrlReset(site.name, hook.url, hook.timeoutSeconds);
  } else {
    let response: Response;
    try {
      response = await fetch(hook.http.url, { method: hook.http.method, signal: AbortSignal.timeout(hook.http.timeoutSeconds * 1000) });
    } catch (error) {
      throw new Error(`reset of site ${site.name}: ${hook.http.method} ${hook.http.url}: ${(error as Error).message}`);
    }
    await response.body?.cancel();
    if (!response.ok) throw new Error(`reset of site ${site.name}: ${hook.http.method} ${hook.http.url}: HTTP ${response.status}`);
  }
  return performance.now() - started;
}
