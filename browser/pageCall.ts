/**
 * Calls one method of the in-page runtime (pageRuntime.ts) in a page's main frame.
 */
import type { Page } from 'playwright-core';
import { createPageRuntime, installListenerProbe, installTimerProbe, type PageRuntime } from './pageRuntime';

// tsx compiles with esbuild's keepNames, which wraps inner functions in `__name(...)`: a helper the page
// does not have. The serialised runtime therefore gets a local identity stand-in.
const RUNTIME = `(() => { const __name = (f) => f; return (${createPageRuntime.toString()})(); })()`;

/**
 * The init script that records the page's timers (installTimerProbe, for settling) and its event listeners
 * (installListenerProbe, for the annotation), for BrowserContext.addInitScript.
 */
export const PAGE_PROBE_SCRIPT = `(() => { const __name = (f) => f; (${installTimerProbe.toString()})(); (${installListenerProbe.toString()})(); })();`;

export async function callPage<K extends keyof PageRuntime>(
  page: Page,
  method: K,
  ...args: Parameters<PageRuntime[K]>
): Promise<Awaited<ReturnType<PageRuntime[K]>>> {
  const result: unknown = await page.evaluate(`${RUNTIME}.${method}(...${JSON.stringify(args)})`);
  return result as Awaited<ReturnType<PageRuntime[K]>>;
}
