/**
 * Executes WebRL actions on the current page with the reference semantics (webrl.md §3) and waits for the
 * page to settle after each one. Clicks land on the centre of the element's visible part, the point the
 * annotation hit-tested. A page opened by an action (a new tab) becomes the current page; dialogs are
 * accepted. An action on an element that is gone is a failed step; a browser or page that breaks or
 * stops answering within the step timeout is an InfrastructureError.
 */
import type { BrowserContext, Dialog, Page } from 'playwright-core';
import type { Action, Observation } from './contract';
import { errorMessage, InfrastructureError, withTimeout } from './errors';
import { observe, type ObservationProfile } from './observe';
import { callPage, TIMER_PROBE_SCRIPT } from './pageCall';
import { DEFAULT_SETTLE, defaultMinWaitMs, isNavigationInterruption, NetworkWatch, settle, type SettleOptions } from './settle';

export interface ExecutorOptions {
  /** Bound on one step's browser work (action + settle, or one observation). */
  stepTimeoutMs: number;
  settle: SettleOptions;
  /** Which annotator the observations follow (observe.ts). */
  profile: ObservationProfile;
}

export const DEFAULT_EXECUTOR_OPTIONS: ExecutorOptions = { stepTimeoutMs: 30_000, settle: DEFAULT_SETTLE, profile: 'default' };

/** Executor options for a profile: its observations, and its minimum wait unless one is given. */
export function executorOptionsFor(profile: ObservationProfile, minWaitMs = defaultMinWaitMs(profile)): ExecutorOptions {
  return { ...DEFAULT_EXECUTOR_OPTIONS, profile, settle: { ...DEFAULT_SETTLE, minWaitMs } };
}

export interface ExecutionResult {
  ok: boolean;
  /** Why the action could not be carried out (element gone, no matching option, ...). */
  error?: string;
  actionMs: number;
  settleMs: number;
}

export class ActionExecutor {
  private current: Page;
  private readonly network: NetworkWatch;
  /** Pages the context opened, newest last (new tabs, popups). */
  private readonly opened: Page[] = [];
  private pageCrashed = false;
  private readonly onPage = (page: Page) => {
    this.watchPage(page);
    this.opened.push(page);
  };
  private readonly onDialog = (dialog: Dialog) => {
    dialog.accept().catch(() => undefined);
  };

  private constructor(
    private readonly context: BrowserContext,
    page: Page,
    private readonly options: ExecutorOptions,
  ) {
    this.current = page;
    this.network = new NetworkWatch(context);
    this.watchPage(page);
    context.on('page', this.onPage);
    context.on('dialog', this.onDialog);
  }

  /** Opens a page in the context (whose documents get the timer probe settling reads), loads `url` and waits for it to settle. */
  static async open(context: BrowserContext, url: string, options: ExecutorOptions = DEFAULT_EXECUTOR_OPTIONS): Promise<ActionExecutor> {
    let executor: ActionExecutor | undefined;
    try {
      await withTimeout(context.addInitScript(TIMER_PROBE_SCRIPT), options.stepTimeoutMs, 'preparing the context');
      const page = await withTimeout(context.newPage(), options.stepTimeoutMs, 'opening a page');
      executor = new ActionExecutor(context, page, options);
      await executor.navigate(url);
      return executor;
    } catch (error) {
      executor?.dispose();
      throw asInfrastructureError(error, context, false, 'opening the start page');
    }
  }

  get page(): Page {
    return this.current;
  }

  async navigate(url: string): Promise<void> {
    await this.guard(`loading ${url}`, async () => {
      const since = performance.now();
      await this.current.goto(url, { waitUntil: 'commit', timeout: this.options.stepTimeoutMs });
      await settle(this.current, this.network, since, this.options.settle);
    });
  }

  /** Annotates the current page; a navigation racing the annotation is waited out and the page read again. */
  observe(): Promise<Observation> {
    return this.guard('observing the page', async () => {
      for (;;) {
        try {
          return await observe(this.current, this.options.profile);
        } catch (error) {
          if (!isNavigationInterruption(error)) throw error;
          await settle(this.current, this.network, performance.now(), this.options.settle);
        }
      }
    });
  }

  screenshot(): Promise<Buffer> {
    return this.guard('taking a screenshot', () => this.current.screenshot({ type: 'png' }));
  }

  async execute(action: Action): Promise<ExecutionResult> {
    const started = performance.now();
    let actionEnded = started;
    const openedBefore = this.opened.length;
    const error = await this.guard(action.kind, async () => {
      const failure = await this.perform(action);
      actionEnded = performance.now();
      if (failure === undefined) await this.settleAfter(started, openedBefore);
      return failure;
    });
    const ended = performance.now();
    return {
      ok: error === undefined,
      ...(error === undefined ? {} : { error }),
      actionMs: actionEnded - started,
      settleMs: ended - actionEnded,
    };
  }

  dispose(): void {
    this.network.dispose();
    this.context.off('page', this.onPage);
    this.context.off('dialog', this.onDialog);
  }

  private watchPage(page: Page): void {
    page.on('crash', () => {
      if (page === this.current) this.pageCrashed = true;
    });
  }

  /** Carries out the action; returns why it could not be, or undefined when it was. */
  private async perform(action: Action): Promise<string | undefined> {
    const page = this.current;
    switch (action.kind) {
      case 'Click':
      case 'Hover':
      case 'Type':
      case 'Search': {
        const point = await callPage(page, 'locate', action.element);
        if (!point) return `element ${action.element} is not on the page or is covered`;
        if (action.kind === 'Hover') {
          await page.mouse.move(point.x, point.y);
          return undefined;
        }
        if (action.kind === 'Click' && point.opensTab) {
          // The new tab's 'page' event can arrive after the old page looks settled on a busy machine,
          // so wait for it rather than for quiet (onPage, registered first, has recorded it by then).
          const tab = this.context.waitForEvent('page', { timeout: this.options.stepTimeoutMs }).catch(() => undefined);
          await page.mouse.click(point.x, point.y);
          await tab;
          return undefined;
        }
        await page.mouse.click(point.x, point.y);
        if (action.kind === 'Click') return undefined;
        await page.keyboard.press('ControlOrMeta+A');
        await page.keyboard.press('Backspace');
        await page.keyboard.type(action.argument);
        if (action.kind === 'Search') await page.keyboard.press('Enter');
        return undefined;
      }
      case 'Select Dropdown Option': {
        const result = await callPage(page, 'selectOption', action.element, action.argument);
        return result.ok ? undefined : result.error;
      }
      case 'Scroll Up':
      case 'Scroll Down':
        await callPage(page, 'scroll', action.kind === 'Scroll Down' ? 1 : -1);
        return undefined;
      case 'Press Enter':
        await page.keyboard.press('Enter');
        return undefined;
      case 'Go Backward':
      case 'Go Forward': {
        const options = { waitUntil: 'commit' as const, timeout: this.options.stepTimeoutMs };
        try {
          await (action.kind === 'Go Backward' ? page.goBack(options) : page.goForward(options));
        } catch (error) {
          if (!this.browserAlive()) throw error;
          return `${action.kind} failed: ${errorMessage(error)}`;
        }
        return undefined;
      }
      case 'exit':
        return undefined;
    }
  }

  /** Settles the page; follows a page the action opened, or falls back when the current one closed. */
  private async settleAfter(started: number, openedBefore: number): Promise<void> {
    await this.settleUnlessClosed(this.current, started);
    const newest = this.opened
      .slice(openedBefore)
      .filter((p) => !p.isClosed())
      .at(-1);
    if (newest) {
      this.current = newest;
      this.pageCrashed = false;
      await newest.bringToFront();
      await this.settleUnlessClosed(newest, started);
    }
    if (this.current.isClosed()) {
      this.current =
        this.context
          .pages()
          .filter((p) => !p.isClosed())
          .at(-1) ?? (await this.context.newPage());
      this.pageCrashed = false;
      await this.settleUnlessClosed(this.current, performance.now());
    }
  }

  /** A page may close itself (window.close()) while we wait on it; that is not a failure. */
  private async settleUnlessClosed(page: Page, since: number): Promise<void> {
    try {
      await settle(page, this.network, since, this.options.settle);
    } catch (error) {
      if (!page.isClosed()) throw error;
    }
  }

  private browserAlive(): boolean {
    return this.context.browser()?.isConnected() ?? true;
  }

  private async guard<T>(what: string, work: () => Promise<T>): Promise<T> {
    try {
      return await withTimeout(work(), this.options.stepTimeoutMs, what);
    } catch (error) {
      throw asInfrastructureError(error, this.context, this.pageCrashed, what);
    }
  }
}

/** Maps a failure of browser work to the infrastructure reason the caller reports. */
function asInfrastructureError(error: unknown, context: BrowserContext, pageCrashed: boolean, what: string): InfrastructureError {
  if (error instanceof InfrastructureError) return error;
  const detail = `${what}: ${errorMessage(error)}`;
  if (!(context.browser()?.isConnected() ?? true)) return new InfrastructureError('browser_crashed', detail, { cause: error });
  if (pageCrashed) return new InfrastructureError('page_crashed', detail, { cause: error });
  return new InfrastructureError('browser_error', detail, { cause: error });
}
