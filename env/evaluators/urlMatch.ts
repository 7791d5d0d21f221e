/**
 * URL comparison for `url_match`, in both harnesses' semantics, and the small part of Python's
 * urllib.parse they rest on (`urlparse`, `parse_qs`), reproduced so that a reference URL splits
 * the way WebArena splits it (netloc as written, `;params` off the path, blank query values dropped,
 * `+` and percent escapes decoded).
 */
import type { Harness } from './textMatch';

export interface ParsedUrl {
  scheme: string;
  netloc: string;
  path: string;
  params: string;
  query: string;
  fragment: string;
}

/** Python's `urllib.parse.urlparse` for the URLs task files hold. */
export function urlparse(url: string): ParsedUrl {
  let rest = url;
  let scheme = '';
  const schemeMatch = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(rest);
  if (schemeMatch) {
    scheme = schemeMatch[1]!.toLowerCase();
    rest = rest.slice(schemeMatch[0].length);
  }
  let netloc = '';
  if (rest.startsWith('//')) {
    const end = rest.slice(2).search(/[/?#]/);
    netloc = end < 0 ? rest.slice(2) : rest.slice(2, end + 2);
    rest = end < 0 ? '' : rest.slice(end + 2);
  }
  let fragment = '';
  const hash = rest.indexOf('#');
  if (hash >= 0) {
    fragment = rest.slice(hash + 1);
    rest = rest.slice(0, hash);
  }
  let query = '';
  const question = rest.indexOf('?');
  if (question >= 0) {
    query = rest.slice(question + 1);
    rest = rest.slice(0, question);
  }
  // `;params` of the last path segment, as urlparse splits them off.
  let params = '';
  const semicolon = rest.indexOf(';', Math.max(0, rest.lastIndexOf('/')));
  if (semicolon >= 0) {
    params = rest.slice(semicolon + 1);
    rest = rest.slice(0, semicolon);
  }
  return { scheme, netloc, path: rest, params, query, fragment };
}

/** Python's `unquote`: percent escapes as UTF-8 bytes, invalid sequences replaced, stray `%` kept. */
export function unquote(text: string): string {
  return text.replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) => Buffer.from(run.replace(/%/g, ''), 'hex').toString('utf8'));
}

/** Python's `parse_qs` with its defaults: `&`-separated, blank values and fields without `=` dropped. */
export function parseQs(query: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const field of query.split('&')) {
    const eq = field.indexOf('=');
    if (!field || eq < 0) continue;
    const value = unquote(field.slice(eq + 1).replaceAll('+', ' '));
    if (!value) continue;
    const name = unquote(field.slice(0, eq).replaceAll('+', ' '));
    out.set(name, [...(out.get(name) ?? []), value]);
  }
  return out;
}

/** WebArena-Lite's URL cleaning: `localhost` -> `127.0.0.1`, one trailing slash dropped. */
function liteClean(url: string): string {
  const out = url.replaceAll('localhost', '127.0.0.1');
  return out.endsWith('/') ? out.slice(0, -1) : out;
}

/** WebArena's URL cleaning: every trailing slash dropped. */
function webArenaClean(url: string): string {
  return url.replace(/\/+$/, '');
}

/**
 * Does the page's URL satisfy `reference` (alternatives joined by ` |OR| `)? WebArena-Lite: `EXACT`
 * (its default) wants one alternative equal to the URL, `GOLD in PRED` one contained in it. WebArena
 * (only `GOLD in PRED`, its default): some alternative's host + path must occur in the URL's host +
 * path, and for every query key any alternative names, the URL must carry one of the values named.
 */
export function urlMatches(harness: Harness, reference: string, rule: 'EXACT' | 'GOLD in PRED' | undefined, pageUrl: string): boolean {
  return URL_MATCHERS[harness](reference, rule, pageUrl);
}

function liteUrlMatches(reference: string, rule: 'EXACT' | 'GOLD in PRED' | undefined, pageUrl: string): boolean {
  const references = reference.split(' |OR| ').map(liteClean);
  const current = liteClean(pageUrl);
  return rule === 'GOLD in PRED' ? references.some((ref) => current.includes(ref)) : references.includes(current);
}

function webArenaUrlMatches(reference: string, _rule: 'EXACT' | 'GOLD in PRED' | undefined, pageUrl: string): boolean {
  const references = reference.split(' |OR| ').map(webArenaClean).map(urlparse);
  const pred = urlparse(webArenaClean(pageUrl));
  const predBase = pred.netloc + pred.path;
  if (!references.some((ref) => predBase.includes(ref.netloc + ref.path))) return false;
  const wanted = new Map<string, Set<string>>();
  for (const ref of references) {
    for (const [key, values] of parseQs(ref.query)) for (const value of values) wanted.set(key, (wanted.get(key) ?? new Set()).add(value));
  }
  const predQuery = parseQs(pred.query);
  return [...wanted].every(([key, values]) => (predQuery.get(key) ?? []).some((value) => values.has(value)));
}

const URL_MATCHERS: Record<Harness, typeof liteUrlMatches> = { 'webarena-lite': liteUrlMatches, webarena: webArenaUrlMatches };
