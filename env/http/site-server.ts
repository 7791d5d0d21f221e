/**
 * Serves one embedded site on its own port: finds the episode state named by the request's cookie,
 * routes the request, and exposes the episode control endpoints the environment uses
 * (`PUT /__webrl/episodes/:id` creates a fresh state, `DELETE` drops it; in-process callers may use
 * `localEpisodeControl` instead).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { EmbeddedSiteName } from '../site-urls';
import { EpisodeStore, episodeIdFromCookie } from '../state/episodes';
import { Html, html } from '../html';
import { HttpError, page, type Reply, type Router } from './router';

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

export async function startSiteServer<S>(
  app: SiteApp<S>,
  options: { host?: string; port?: number } = {},
): Promise<RunningSite> {
  const store = new EpisodeStore(app.freshState);
  const episodeControl = /^\/__webrl\/episodes\/([A-Za-z0-9_-]{1,100})$/;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://embedded');
    const control = episodeControl.exec(url.pathname);
    if (control) {
      const id = control[1] as string;
      if (req.method === 'PUT') store.create(id);
      else if (req.method === 'DELETE') store.drop(id);
      else return send(res, { status: 405, headers: {}, body: '' });
      return send(res, { status: 204, headers: {}, body: '' });
    }
    if (url.pathname === '/__webrl/health') {
      return send(res, { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ site: app.name, episodes: store.size }) });
    }
    const episodeId = episodeIdFromCookie(req.headers.cookie);
    const state = episodeId === undefined ? store.publicState : store.get(episodeId);
    if (state === undefined) {
      return send(res, page(html`<h1>Episode expired</h1><p>This browser's episode (${episodeId}) is no longer served.</p>`, 410));
    }
    const atRoot = app.rootPaths?.some((prefix) => url.pathname === prefix || url.pathname.startsWith(`${prefix}/`)) ?? false;
    if (!atRoot && !url.pathname.startsWith(app.basePath)) {
      return send(res, { status: 302, headers: { location: app.basePath + '/' }, body: '' });
    }
    const path = (atRoot ? url.pathname : url.pathname.slice(app.basePath.length)).replace(/\/+$/, '') || '/';
    const method = req.method === 'HEAD' ? 'GET' : (req.method ?? 'GET');
    try {
      const match = app.router.match(method, path);
      if (!match) throw new HttpError(404, `Page ${url.pathname} was not found`);
      const body = method === 'POST' ? await readBody(req) : '';
      const form = new URLSearchParams(body);
      const result = match.handler({ method, url, path, params: match.params, query: url.searchParams, form, body, headers: req.headers, state, base: app.basePath });
      send(res, result instanceof Html ? page(result) : result);
    } catch (error) {
      const status = error instanceof HttpError ? error.status : 500;
      send(res, page(app.errorPage(state, status, (error as Error).message), status));
    }
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
  localSites.set(origin, { create: (id) => store.create(id), drop: (id) => void store.drop(id) });
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
