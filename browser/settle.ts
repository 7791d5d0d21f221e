/**
 * Waits for the page to settle after an action instead of sleeping a fixed time (the reference harness
 * sleeps 3 s). Settled means: no main-frame navigation in flight, no request started since the action
 * still pending, and the DOM unchanged for `quietMs` (a MutationObserver in the page). Navigations are
 * waited for until the step timeout (an unloaded page is useless to observe); requests and DOM churn only
 * until `capMs`, after which the page is observed as it is (long polls, tickers, animations).
 */
import type { BrowserContext, Frame, Page, Request } from 'playwright-core';
import { callPage } from './page-call';

export interface SettleOptions {
  /** How long the DOM must stay unchanged. */
  quietMs: number;
  /** The most time spent waiting for network and DOM quiet after an action. */
  capMs: number;
}

export const DEFAULT_SETTLE: SettleOptions = { quietMs: 25, capMs: 3000 };

/** The frame that issued a request; a new tab's first navigation has none yet (Playwright throws). */
function frameOf(request: Request): Frame | undefined {
  try {
    return request.frame();
  } catch {
    return undefined;
  }
}

/** Tracks the context's in-flight requests with their start times, so a step waits only for its own. */
export class NetworkWatch {
  private readonly pending = new Map<Request, number>();
  private readonly waiters = new Set<() => void>();
  private readonly onRequest = (request: Request) => {
    this.pending.set(request, performance.now());
  };
  private readonly onDone = (request: Request) => {
    this.pending.delete(request);
    for (const wake of this.waiters) wake();
  };

  constructor(private readonly context: BrowserContext) {
    context.on('request', this.onRequest);
    context.on('requestfinished', this.onDone);
    context.on('requestfailed', this.onDone);
  }

  /** Requests started at or after `since` (a performance.now() time) still in flight. */
  busySince(since: number): boolean {
    for (const started of this.pending.values()) if (started >= since) return true;
    return false;
  }

  /** Whether a navigation of the page's main frame started at or after `since` is still in flight. */
  navigatingSince(page: Page, since: number): boolean {
    for (const [request, started] of this.pending) {
      if (started >= since && request.isNavigationRequest() && frameOf(request) === page.mainFrame()) return true;
    }
    return false;
  }

  /** Resolves when `done()` holds after a request ends, or at `until` (performance.now() time; may be infinite). */
  waitUntil(done: () => boolean, until: number): Promise<void> {
    if (done()) return Promise.resolve();
    return new Promise((resolve) => {
      const finish = () => {
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve();
      };
      const check = () => {
        if (done()) finish();
      };
      const delay = until - performance.now();
      const timer = Number.isFinite(delay) ? setTimeout(finish, Math.max(0, delay)) : undefined;
      this.waiters.add(check);
    });
  }

  dispose(): void {
    this.context.off('request', this.onRequest);
    this.context.off('requestfinished', this.onDone);
    this.context.off('requestfailed', this.onDone);
    for (const wake of this.waiters) wake();
  }
}

/** Whether an in-page call failed because the document was replaced while it ran. */
export function isNavigationInterruption(error: unknown): boolean {
  const message = error instanceof Error ? error.message : String(error);
  return /Execution context was destroyed|Cannot find context|navigation/i.test(message);
}

/** Waits until the page is settled after an action that began at `since` (performance.now() time). */
export async function settle(page: Page, network: NetworkWatch, since: number, options: SettleOptions): Promise<void> {
  const cap = performance.now() + options.capMs;
  for (;;) {
    if (network.navigatingSince(page, since)) {
      // No cap here: the caller's step timeout bounds a navigation that never completes.
      await network.waitUntil(() => !network.navigatingSince(page, since), Number.POSITIVE_INFINITY);
    }
    const left = cap - performance.now();
    try {
      await callPage(page, 'waitForQuiet', options.quietMs, Math.max(0, left));
    } catch (error) {
      // The document was replaced under the check: look again at the new one.
      if (isNavigationInterruption(error)) continue;
      throw error;
    }
    if (network.navigatingSince(page, since)) continue;
    if (!network.busySince(since) || performance.now() >= cap) return;
    await network.waitUntil(() => !network.busySince(since), cap);
  }
}
