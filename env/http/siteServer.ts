/**
 * Serves one embedded site on its own port, in one of two deployments:
 * - `episodes` (the campaigns' in-process default): finds the episode state named by the request's
 *   cookie, routes the request, and exposes the episode control endpoints the environment uses
 *   (`PUT /__webrl/episodes/:id` creates a fresh state, `DELETE` drops it; in-process callers may use
 *   `localEpisodeControl` instead);
 * - `standalone` (`webrl env serve`, what the `webarena` backend talks to): one shared state like a
 *   real deployment, a login page (the form WebArena's auto-login fills) that every page redirects to
 *   without a session, and `POST /__webrl/reset`, which restores the seeded state and ends every session.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { EmbeddedSiteName } from '../siteUrls';
import { LOGIN_FORMS, renderLoginPage } from '../loginForms';
import { changedRows } from '../state/cowTable';
import { EpisodeStore, episodeIdFromCookie } from '../state/episodes';
import { Html, html } from '../html';
import { HttpError, json, page, type Reply, type Router } from './router';

export interface SiteApp<S> {
  name: EmbeddedSiteName;
  /** All pages live under this prefix (`/admin` for the shop's back office), '' for the root. */
  basePath: string;
  /** Paths served from the origin's root even though the pages live under basePath (Magento's `/rest`). */
  rootPaths?: readonly string[];
  freshState(): S;
  router: Router<S>;
  /** The site's error page around a message, in its own layout. */
  errorPage(state: S, status: number, message: string): Html;
}

export interface RunningSite {
  name: EmbeddedSiteName;
  /** Base URL of the site, what its placeholder resolves to. */
  url: string;
  /** Origin (scheme, host, port) where the episode control endpoints live. */
  origin: string;
  port: number;
  stop(): Promise<void>;
}

const MAX_BODY_BYTES = 1 << 20;

/** The one account of a standalone site (the user its pages show). */
export interface SiteAccount {
  username: string;
  password: string;
}

export interface StandaloneOptions {
  account: SiteAccount;
  /** One line per login, failed login and reset (never a password or a session id). */
  log?(line: string): void;
}

/** The session cookie of a standalone site: one name per site, since cookies do not tell ports apart. */
export function sessionCookieName(site: EmbeddedSiteName): string {
  return `webrl_session_${site}`;
}

function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const [key, ...rest] = part.trim().split('=');
    if (key === name) return decodeURIComponent(rest.join('='));
  }
  return undefined;
}

function sameSecret(a: string, b: string): boolean {
  const [x, y] = [Buffer.from(a), Buffer.from(b)];
  return x.length === y.length && timingSafeEqual(x, y);
}

/** What a standalone site adds: shared state, sessions, the login page, reset; undefined in episodes mode. */
interface Standalone {
  state: unknown;
  sessions: Set<string>;
  logins: number;
  failedLogins: number;
  resets: number;
}

/** Episode control of a site served by this process. */
export interface EpisodeControl {
  create(id: string): void;
  drop(id: string): void;
}

/** Sites running in this process, by origin: the environment skips HTTP for them (a reset in microseconds). */
const localSites = new Map<string, EpisodeControl>();

export function localEpisodeControl(origin: string): EpisodeControl | undefined {
  return localSites.get(origin);
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new HttpError(413, 'request body too large');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function send(res: ServerResponse, reply: Reply): void {
  res.writeHead(reply.status, { 'cache-control': 'no-store', ...reply.headers });
  res.end(reply.body);
}

/** A standalone site as its own routes see it: the app, its shared state, its login form and session cookie. */
interface StandaloneSite<S> {
  app: SiteApp<S>;
  site: Standalone;
  account: SiteAccount;
  form: (typeof LOGIN_FORMS)[EmbeddedSiteName];
  loginPath: string;
  cookie: string;
  log(line: string): void;
}

/** The standalone site's own routes: health, reset, login; undefined when the request is for the app. */
async function standaloneRoute<S>(req: IncomingMessage, url: URL, standalone: StandaloneSite<S>): Promise<Reply | undefined> {
  const { app, site, form, loginPath, cookie, log } = standalone;
  const path = url.pathname.replace(/\/+$/, '') || '/';
  if (path === '/__webrl/health') {
    return json({
      site: app.name,
      mode: 'standalone',
      logins: site.logins,
      failedLogins: site.failedLogins,
      resets: site.resets,
      changedRows: changedRows(site.state),
    });
  }
  if (path === '/__webrl/reset') {
    if (req.method !== 'POST') return { status: 405, headers: { allow: 'POST' }, body: '' };
    const dropped = changedRows(site.state);
    site.state = app.freshState();
    site.sessions.clear();
    site.resets++;
    log(`reset ${app.name}: seeded state restored (${dropped} changed rows dropped), sessions ended`);
    return json({ site: app.name, droppedRows: dropped });
  }
  const session = cookieValue(req.headers.cookie, cookie);
  const signedIn = Boolean(session && site.sessions.has(session));
  if (path === loginPath && !(signedIn && req.method !== 'POST')) return loginRoute(req, url, standalone);
  if (path === loginPath && form?.path) return { status: 303, headers: { location: url.searchParams.get('next') ?? `${app.basePath}/` }, body: '' };
  // API paths answer for themselves (tokens, as on the real sites); everything else needs a session.
  const api = /^\/(rest|api)\//.test(path.slice(app.basePath.length));
  if (form && !signedIn && !api && !path.startsWith('/__webrl/')) {
    return { status: 302, headers: { location: `${loginPath}?next=${encodeURIComponent(url.pathname + url.search)}` }, body: '' };
  }
  return undefined;
}

/** The login page, and a sign-in posted to it. */
async function loginRoute<S>(req: IncomingMessage, url: URL, { app, site, account, form, cookie, log }: StandaloneSite<S>): Promise<Reply> {
  const next = url.searchParams.get('next') ?? `${app.basePath}/`;
  const title = `${app.name} sign in`;
  if (req.method !== 'POST') return page(renderLoginPage(title, form!, url.pathname, next));
  const fields = new URLSearchParams(await readBody(req));
  const target = fields.get('next') || `${app.basePath}/`;
  if (sameSecret(fields.get('username') ?? '', account.username) && sameSecret(fields.get('password') ?? '', account.password)) {
    const session = randomBytes(18).toString('base64url');
    site.sessions.add(session);
    site.logins++;
    log(`login ${app.name}: ${account.username} signed in`);
    // Only a path on this site: an open redirect would take the browser elsewhere.
    const location = target.startsWith('/') && !target.startsWith('//') ? target : `${app.basePath}/`;
    return { status: 303, headers: { location, 'set-cookie': `${cookie}=${session}; Path=/; HttpOnly; SameSite=Lax` }, body: '' };
  }
  site.failedLogins++;
  log(`login ${app.name}: failed sign-in attempt`);
  return page(renderLoginPage(title, form!, url.pathname, target, 'The account sign-in was incorrect. Please try again.'), 401);
}

/** A request for one of the app's pages, on `state`. */
async function appRoute<S>(app: SiteApp<S>, state: S, req: IncomingMessage, url: URL): Promise<Reply> {
  const atRoot = app.rootPaths?.some((prefix) => url.pathname === prefix || url.pathname.startsWith(`${prefix}/`)) ?? false;
  if (!atRoot && !url.pathname.startsWith(app.basePath)) return { status: 302, headers: { location: app.basePath + '/' }, body: '' };
  const path = (atRoot ? url.pathname : url.pathname.slice(app.basePath.length)).replace(/\/+$/, '') || '/';
  const method = req.method === 'HEAD' ? 'GET' : (req.method ?? 'GET');
  try {
    const match = app.router.match(method, path);
    if (!match) throw new HttpError(404, `Page ${url.pathname} was not found`);
    const body = method === 'POST' ? await readBody(req) : '';
    const form = new URLSearchParams(body);
    const result = match.handler({
      method,
      url,
      path,
      params: match.params,
      query: url.searchParams,
      form,
      body,
      headers: req.headers,
      state,
      base: app.basePath,
    });
    return result instanceof Html ? page(result) : result;
  } catch (error) {
    const status = error instanceof HttpError ? error.status : 500;
    return page(app.errorPage(state, status, (error as Error).message), status);
  }
}

export async function startSiteServer<S>(
  app: SiteApp<S>,
  options: { host?: string; port?: number; standalone?: StandaloneOptions } = {},
): Promise<RunningSite> {
  const store = new EpisodeStore(app.freshState);
  const episodeControl = /^\/__webrl\/episodes\/([A-Za-z0-9_-]{1,100})$/;
  const form = LOGIN_FORMS[app.name];
  const standalone: StandaloneSite<S> | undefined = options.standalone && {
    app,
    site: { state: app.freshState(), sessions: new Set(), logins: 0, failedLogins: 0, resets: 0 },
    account: options.standalone.account,
    form,
    loginPath: `${app.basePath}${form ? form.path : '/login'}`.replace(/\/+$/, '') || '/',
    cookie: sessionCookieName(app.name),
    log: options.standalone.log ?? (() => {}),
  };
  const shared = standalone?.site;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://embedded');
    if (standalone) {
      const own = await standaloneRoute(req, url, standalone);
      if (own) return send(res, own);
    }
    const control = episodeControl.exec(url.pathname);
    if (control && !shared) {
      const id = control[1] as string;
      if (req.method === 'PUT') store.create(id);
      else if (req.method === 'DELETE') store.drop(id);
      else return send(res, { status: 405, headers: {}, body: '' });
      return send(res, { status: 204, headers: {}, body: '' });
    }
    if (url.pathname === '/__webrl/health') {
      return send(res, json({ site: app.name, episodes: store.size }));
    }
    const episodeId = shared ? undefined : episodeIdFromCookie(req.headers.cookie);
    const state = shared ? (shared.state as S) : episodeId === undefined ? store.publicState : store.get(episodeId);
    if (state === undefined) {
      return send(
        res,
        page(
          html`<h1>Episode expired</h1>
            <p>This browser's episode (${episodeId}) is no longer served.</p>`,
          410,
        ),
      );
    }
    send(res, await appRoute(app, state, req, url));
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => send(res, { status: 500, headers: {}, body: String(error) }));
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const origin = `http://${host}:${port}`;
  if (!shared) localSites.set(origin, { create: (id) => store.create(id), drop: (id) => void store.drop(id) });
  return {
    name: app.name,
    url: origin + app.basePath,
    origin,
    port,
    stop: () =>
      new Promise<void>((resolve, reject) => {
        localSites.delete(origin);
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}
