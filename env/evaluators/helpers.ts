/**
 * The named helper functions that WebArena task files call from `program_html` (`func:name(args)`):
 * URL helpers say which page to check, locator helpers read a value off the page. They work on the
 * embedded sites and on real WebArena sites alike: the embedded sites reproduce the URL and DOM
 * conventions of the originals these helpers rely on.
 */
import type { Page } from 'playwright-core';
import type { SiteUrls } from '../site-urls';

export interface HelperContext {
  page: Page;
  siteUrls: SiteUrls;
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

/** `http://host/f/forum/123/slug/comment/9` -> `http://host/f/forum/123/`; other URLs unchanged. */
export function redditPostUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url;
  }
  const parts = parsed.pathname.split('/');
  if (parts.length < 4 || parts[1] !== 'f') return url;
  return `${parsed.protocol}//${parsed.host}/f/${parts[2]}/${parts[3]}/`;
}

export const URL_HELPERS: Record<string, Helper> = {
  reddit_get_post_url: {
    signature: ['string'],
    run: async (_ctx, [url]) => redditPostUrl(url ?? ''),
  },
  /** The customer's newest order: the first "View Order" link of My Orders (newest first). */
  shopping_get_latest_order_url: {
    signature: [],
    run: async (ctx) => {
      const history = `${siteUrl(ctx, 'shopping')}/sales/order/history/`;
      await ctx.page.goto(history, { waitUntil: 'load' });
      const href = await ctx.page.evaluate(() => document.querySelector('#my-orders-table a.action.view')?.getAttribute('href') ?? '');
      return href ? new URL(href, history).href : history;
    },
  },
};

export const LOCATOR_HELPERS: Record<string, Helper> = {
  /** The role shown in a project's members table for the account `@username` ('' if absent). */
  gitlab_get_project_memeber_role: {
    signature: ['page', 'string'],
    run: async (ctx, [username]) =>
      ctx.page.evaluate((account) => {
        const accounts = Array.from(document.querySelectorAll('td[data-label="Account"]'));
        const index = accounts.findIndex(
          (cell) => (cell.querySelector('.gl-avatar-labeled-sublabel') as HTMLElement | null)?.innerText.trim() === `@${account}`,
        );
        if (index < 0) return '';
        const role = document.querySelectorAll('td.col-max-role')[index];
        return (role?.querySelector('span, button, select option:checked') as HTMLElement | null)?.innerText.trim() ?? '';
      }, username ?? ''),
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
