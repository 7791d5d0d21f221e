/**
 * The named helper functions that WebArena task files call from `program_html` (`func:name(args)`),
 * every one the original benchmark's configs use: URL helpers say which page to check, locator
 * helpers read a value. They work on the embedded sites and on real WebArena sites alike: the
 * reddit and GitLab helpers read URLs and DOM conventions the embedded sites reproduce, and the shop
 * helpers ask the shop's REST API (an admin token first, as WebArena does), which the embedded shop
 * serves too. The admin account comes from the evaluator's options or the environment
 * (WEBRL_SHOPPING_ADMIN_USERNAME / WEBRL_SHOPPING_ADMIN_PASSWORD), never from a task file, and is never logged.
 */
import type { Page } from 'playwright-core';
import { loadShopAdminAccount, neverStore, SECRET_ENV, type ShopAdminAccount } from '../../config/secrets';
import type { SiteUrls } from '../siteUrls';
import { EPISODE_COOKIE } from '../state/episodes';
import { urlparse } from './urlMatch';

export interface HelperContext {
  page: Page;
  siteUrls: SiteUrls;
  /** The shop's admin account for its REST API; default from the environment. */
  shopAdmin?: ShopAdminAccount;
}

/** `__page__` passes the page; every other argument is a string literal. */
export type HelperArg = { kind: 'page' } | { kind: 'string'; value: string };

export interface HelperCall {
  name: string;
  args: HelperArg[];
}

interface Helper {
  /** Argument kinds in order. */
  signature: ('page' | 'string')[];
  run(ctx: HelperContext, strings: string[]): Promise<string>;
}

function siteUrl(ctx: HelperContext, site: 'shopping' | 'reddit' | 'gitlab'): string {
  const url = ctx.siteUrls[site];
  if (!url) throw new Error(`helper needs the ${site} site's URL`);
  return url.replace(/\/$/, '');
}

/**
 * WebArena's reddit_get_post_url: `http://host/f/forum/123/slug/comment/9` -> `http://host/f/forum/123/`;
 * a URL whose path is not `/f/<forum>/<post>...` comes back unchanged.
 */
export function redditPostUrl(url: string): string {
  const parsed = urlparse(url);
  const parts = parsed.path.split('/');
  if (parts.length < 4 || parts[1] !== 'f') return url;
  return `${parsed.scheme}://${parsed.netloc}/f/${parts[2]}/${parts[3]}/`;
}

const REST_TIMEOUT_MS = 30_000;

/**
 * One call to the shop's REST API. The episode cookie of the page's browser context goes along, so
 * the embedded shop answers from the episode's state; a real shop has no such cookie.
 */
async function shopRest(ctx: HelperContext, method: 'GET' | 'POST', path: string, options: { token?: string; body?: string } = {}): Promise<unknown> {
  const base = siteUrl(ctx, 'shopping');
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  const episode = (await ctx.page.context().cookies(base)).find((cookie) => cookie.name === EPISODE_COOKIE);
  if (episode) headers.cookie = `${EPISODE_COOKIE}=${episode.value}`;
  const what = `the shop's REST API (${method} ${base}${path.split('?')[0]})`;
  let response: Response;
  try {
    response = await fetch(`${base}${path}`, {
      method,
      headers,
      ...(options.body !== undefined ? { body: options.body } : {}),
      signal: AbortSignal.timeout(REST_TIMEOUT_MS),
    });
  } catch (error) {
    throw new Error(`${what} is unreachable: ${(error as Error).message}`, { cause: error });
  }
  const text = await response.text();
  if (!response.ok) throw new Error(`${what} answered HTTP ${response.status}`);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new Error(`${what} answered something other than JSON`);
  }
}

/** WebArena's shopping_get_auth_token: the admin account exchanged for a bearer token. */
async function shopAdminToken(ctx: HelperContext): Promise<string> {
  const account = ctx.shopAdmin ?? loadShopAdminAccount();
  if (!account) {
    throw new Error(`the shop helpers need the shop's admin account: set ${SECRET_ENV.shopAdminUsername} and ${SECRET_ENV.shopAdminPassword}`);
  }
  const body = JSON.stringify({ username: account.username.reveal(), password: account.password.reveal() });
  const token = await shopRest(ctx, 'POST', '/rest/default/V1/integration/admin/token', { body });
  if (typeof token !== 'string' || !token) throw new Error("the shop's token endpoint answered no token");
  neverStore(token);
  return token;
}

interface RestReviewReply {
  nickname?: unknown;
  ratings?: { rating_name?: unknown; percent?: unknown }[];
}

/** A product's reviews in the API's order (WebArena reads the last as the latest). */
async function skuReviews(ctx: HelperContext, sku: string): Promise<RestReviewReply[]> {
  const token = await shopAdminToken(ctx);
  const reviews = await shopRest(ctx, 'GET', `/rest/V1/products/${encodeURIComponent(sku)}/reviews`, { token });
  if (!Array.isArray(reviews)) throw new Error(`the shop's reviews of ${sku} are not a list`);
  return reviews as RestReviewReply[];
}

export const URL_HELPERS: Record<string, Helper> = {
  reddit_get_post_url: {
    signature: ['string'],
    run: async (_ctx, [url]) => redditPostUrl(url ?? ''),
  },
  /** The shop's newest order (by creation time) as its storefront page, asked of the REST API. */
  shopping_get_latest_order_url: {
    signature: [],
    run: async (ctx) => {
      const token = await shopAdminToken(ctx);
      const query = new URLSearchParams({
        'searchCriteria[sortOrders][0][field]': 'created_at',
        'searchCriteria[sortOrders][0][direction]': 'DESC',
        'searchCriteria[pageSize]': '1',
      });
      const reply = (await shopRest(ctx, 'GET', `/rest/V1/orders?${query}`, { token })) as { items?: { increment_id?: unknown }[] };
      const latest = reply?.items?.[0];
      if (!latest) throw new Error('the shop has no orders');
      const id = Number.parseInt(String(latest.increment_id), 10);
      if (!Number.isInteger(id)) throw new Error(`the shop's latest order has no numeric increment_id (${String(latest.increment_id)})`);
      return `${siteUrl(ctx, 'shopping')}/sales/order/view/order_id/${id}/`;
    },
  },
};

export const LOCATOR_HELPERS: Record<string, Helper> = {
  /**
   * The role shown in a project's members table for the account `@username`: the n-th role of the
   * table for the n-th account label; '' when the account is not listed or the page is not that table.
   */
  gitlab_get_project_memeber_role: {
    signature: ['page', 'string'],
    run: async (ctx, [username]) => {
      try {
        return await ctx.page.evaluate((account) => {
          const labels = Array.from(document.querySelectorAll<HTMLElement>("td[data-label='Account'] span.gl-avatar-labeled-sublabel"));
          const index = labels.findIndex((label) => label.outerText === `@${account}`);
          const role = document.querySelectorAll<HTMLElement>('td.col-max-role span')[index];
          if (!role) throw new Error('no role');
          return role.outerText;
        }, username ?? '');
      } catch {
        return '';
      }
    },
  },
  /** The nickname on the product's latest review ('' without reviews). */
  shopping_get_sku_latest_review_author: {
    signature: ['string'],
    run: async (ctx, [sku]) => {
      const reviews = await skuReviews(ctx, sku ?? '');
      const latest = reviews[reviews.length - 1];
      return latest ? String(latest.nickname ?? '') : '';
    },
  },
  /** The latest review's rating in percent, as text ('' without reviews). */
  shopping_get_sku_latest_review_rating: {
    signature: ['string'],
    run: async (ctx, [sku]) => {
      const reviews = await skuReviews(ctx, sku ?? '');
      const latest = reviews[reviews.length - 1];
      if (!latest) return '';
      if (reviews[0]?.ratings?.[0]?.rating_name !== 'Rating') throw new Error(`the reviews of ${sku} carry no "Rating" rating first`);
      return String(latest.ratings?.[0]?.percent ?? '');
    },
  },
};

/** Parses `name('a', __page__, "b")`; throws on anything else. */
export function parseHelperCall(expression: string): HelperCall {
  const m = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*\((.*)\)\s*$/s.exec(expression);
  if (!m) throw new Error(`not a helper call: ${expression}`);
  const args: HelperArg[] = [];
  let rest = (m[2] ?? '').trim();
  while (rest) {
    const page = /^__page__\s*(,\s*|$)/.exec(rest);
    const literal = /^(['"])((?:\\.|(?!\1).)*)\1\s*(,\s*|$)/s.exec(rest);
    if (page) {
      args.push({ kind: 'page' });
      rest = rest.slice(page[0].length);
    } else if (literal) {
      args.push({ kind: 'string', value: (literal[2] ?? '').replace(/\\(.)/g, '$1') });
      rest = rest.slice(literal[0].length);
    } else {
      throw new Error(`cannot parse the arguments of ${expression}`);
    }
  }
  return { name: m[1] as string, args };
}

export type HelperKind = 'url' | 'locator';

/** Checks that a call names a known helper of the right kind with fitting arguments. */
export function checkHelperCall(call: HelperCall, kind: HelperKind): void {
  const registry = kind === 'url' ? URL_HELPERS : LOCATOR_HELPERS;
  const helper = registry[call.name];
  if (!helper) {
    throw new Error(`unknown ${kind} helper "${call.name}" (known: ${Object.keys(registry).join(', ')})`);
  }
  const kinds = call.args.map((arg) => arg.kind);
  if (kinds.join(',') !== helper.signature.join(',')) {
    throw new Error(`${call.name} takes (${helper.signature.join(', ')}), got (${kinds.join(', ')})`);
  }
}

/** Runs a checked call; `__last_url__` inside string arguments becomes the page's current URL. */
export async function runHelperCall(call: HelperCall, kind: HelperKind, ctx: HelperContext): Promise<string> {
  const helper = (kind === 'url' ? URL_HELPERS : LOCATOR_HELPERS)[call.name];
  if (!helper) throw new Error(`unknown ${kind} helper ${call.name}`);
  const strings = call.args.flatMap((arg) => (arg.kind === 'string' ? [arg.value.replaceAll('__last_url__', ctx.page.url())] : []));
  return helper.run(ctx, strings);
}
