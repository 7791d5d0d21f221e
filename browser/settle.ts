/**
 * Waits for the page to settle after an action instead of sleeping a fixed time (the reference harness
 * sleeps 3 s, then 500 ms before each observation). Settled means: no main-frame navigation in flight, no
 * request started since the action still pending, no timeout the page scheduled due and no animation frame
 * pending within `timerHorizonMs` (recorded by the timer probe the executor installs; an autocomplete's
 * suggestions 300 ms after typing), the DOM unchanged for `quietMs` (a MutationObserver in the page), and
 * at least `minWaitMs` passed (0 for the default profile, the reference's 500 ms for `webrl`). Navigations
 * are waited for until the step timeout (an unloaded page is useless to observe); requests, timers and DOM
 * churn only until `capMs`, after which the page is observed as it is (long polls, tickers, animations).
 * A quiet page waits `quietMs`, or `minWaitMs` when that is longer.
 */
import type { BrowserContext, Frame, Page, Request } from 'playwright-core';
import { callPage } from './pageCall';
import type { ObservationProfile } from './pageRuntime';

export interface SettleOptions {
  /** How long the DOM must stay unchanged. */
  quietMs: number;
  /** The most time spent waiting for network, timers and DOM quiet after an action. */
  capMs: number;
  /** The least time between an action (or a page load) and the observation; default 0. */
  minWaitMs?: number;
  /** Timeouts due and animation frames pending within this long of the action are waited for; default 0 (none). */
  timerHorizonMs?: number;
}

export const DEFAULT_SETTLE: SettleOptions = { quietMs: 25, capMs: 3000, minWaitMs: 0, timerHorizonMs: 1000 };

/** The reference harness's wait before every observation: the `webrl` profile's minimum wait. */
export const WEBRL_MIN_WAIT_MS = 500;

/** A profile's default minimum wait before an observation. */
export function defaultMinWaitMs(profile: ObservationProfile): number {
  return profile === 'webrl' ? WEBRL_MIN_WAIT_MS : 0;
}

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
  const started = performance.now();
  const cap = started + options.capMs;
  const minimum = started + (options.minWaitMs ?? 0);
  const horizon = started + (options.timerHorizonMs ?? 0);
  for (;;) {
    if (network.navigatingSince(page, since)) {
      // No cap here: the caller's step timeout bounds a navigation that never completes.
      await network.waitUntil(() => !network.navigatingSince(page, since), Number.POSITIVE_INFINITY);
    }
    const now = performance.now();
    const left = (until: number) => Math.max(0, until - now);
    try {
      await callPage(page, 'waitForQuiet', options.quietMs, left(cap), left(minimum), left(horizon));
    } catch (error) {
      // The document was replaced under the check: look again at the new one.
      if (isNavigationInterruption(error)) continue;
      throw error;
    }
    if (network.navigatingSince(page, since)) continue;
    if (!network.busySince(since) || performance.now() >= cap) {
      // The page's check ends at the minimum wait unless the document was still parsing at the cap.
      if (performance.now() >= minimum) return;
      continue;
    }
    await network.waitUntil(() => !network.busySince(since), cap);
  }
}
