/**
 * The little web framework the embedded sites share: path patterns with `:params`, urlencoded form
 * bodies, and replies that are pages, redirects (303 after every POST, as real sites do) or errors.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { Html } from '../html';

export interface RequestContext<S> {
  method: string;
  url: URL;
  /** Path without the site's base path, no trailing slash (root is `/`). */
  path: string;
  params: Record<string, string>;
  query: URLSearchParams;
  form: URLSearchParams;
  /** The request body as sent (a POST's urlencoded form or JSON); '' for other methods. */
  body: string;
  headers: IncomingHttpHeaders;
  state: S;
  /** Prefix for links inside the site (e.g. `/admin`), never ending with `/`. */
  base: string;
}

export interface Reply {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export type Handler<S> = (ctx: RequestContext<S>) => Reply | Html;

export interface Route<S> {
  method: 'GET' | 'POST';
  matcher: RegExp;
  names: string[];
  handler: Handler<S>;
}

/** `/f/:forum/:id/:slug?` -> a regex; `:name*` matches the rest of the path, slashes included. */
export function compilePattern(pattern: string): { matcher: RegExp; names: string[] } {
  const names: string[] = [];
  let source = '';
  for (const segment of pattern.split('/').filter(Boolean)) {
    const param = /^:([a-zA-Z_]+)([?*]?)$/.exec(segment);
    if (!param) {
      source += '/' + segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      continue;
    }
    names.push(param[1] as string);
    if (param[2] === '?') source += '(?:/([^/]+))?';
    else if (param[2] === '*') source += '/(.+)';
    else source += '/([^/]+)';
  }
  return { matcher: new RegExp(`^${source || '/'}$`), names };
}

export class Router<S> {
  private readonly routes: Route<S>[] = [];

  get(pattern: string, handler: Handler<S>): this {
    return this.add('GET', pattern, handler);
  }

  post(pattern: string, handler: Handler<S>): this {
    return this.add('POST', pattern, handler);
  }

  private add(method: 'GET' | 'POST', pattern: string, handler: Handler<S>): this {
    this.routes.push({ method, ...compilePattern(pattern), handler });
    return this;
  }

  match(method: string, path: string): { handler: Handler<S>; params: Record<string, string> } | undefined {
    for (const route of this.routes) {
      if (route.method !== method) continue;
      const m = route.matcher.exec(path);
      if (!m) continue;
      const params: Record<string, string> = {};
      route.names.forEach((name, i) => {
        const value = m[i + 1];
        if (value !== undefined) params[name] = decodeURIComponent(value);
      });
      return { handler: route.handler, params };
    }
    return undefined;
  }
}

export function page(body: Html, status = 200): Reply {
  return { status, headers: { 'content-type': 'text/html; charset=utf-8' }, body: body.value };
}

export function json(value: unknown, status = 200): Reply {
  return { status, headers: { 'content-type': 'application/json; charset=utf-8' }, body: JSON.stringify(value) };
}

export function redirect(location: string): Reply {
  return { status: 303, headers: { location }, body: '' };
}

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export function notFound(what: string): never {
  throw new HttpError(404, `${what} was not found`);
}

/** A required positive integer route parameter. */
export function intParam(params: Record<string, string>, name: string): number {
  const value = Number(params[name]);
  if (!Number.isInteger(value) || value <= 0) notFound(`${name} ${params[name] ?? ''}`);
  return value;
}

/** The 1-based page number of a paginated list (`?p=` or `?page=`). */
export function pageNumber(query: URLSearchParams, key = 'p'): number {
  const n = Number(query.get(key) ?? '1');
  return Number.isInteger(n) && n > 0 ? n : 1;
}
