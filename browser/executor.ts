/**
 * Executes WebRL actions on the current page with the reference semantics (webrl.md §3) and waits for the
 * page to settle after each one. Clicks land on the centre of the element's visible part, the point the
 * annotation hit-tested. A page opened by an action (a new tab) becomes the current page; dialogs are
 * accepted. An action that did not take effect is a failed step: an element that is gone, a Type whose
 * field does not hold the text afterwards (or that found no field), a scroll where nothing moves. A
 * browser or page that breaks or stops answering within the step timeout is an InfrastructureError.
 */
import type { BrowserContext, Dialog, Page } from 'playwright-core';
import type { Action, Observation } from './contract';
import { errorMessage, InfrastructureError, withTimeout } from './errors';
import { observe, type ObservationProfile } from './observe';
import type { ClickTarget } from './pageRuntime';
import { holdsPicked, holdsTyped, pickerValue } from './fieldValues';
import { callPage, PAGE_PROBE_SCRIPT } from './pageCall';
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

  /**
   * Opens a page in the context (whose documents get the probes: the timers settling reads, the listeners
   * the annotation reads), loads `url` and waits for it to settle.
   */
  static async open(context: BrowserContext, url: string, options: ExecutorOptions = DEFAULT_EXECUTOR_OPTIONS): Promise<ActionExecutor> {
    let executor: ActionExecutor | undefined;
    try {
      await withTimeout(context.addInitScript(PAGE_PROBE_SCRIPT), options.stepTimeoutMs, 'preparing the context');
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
      // A failed action may still have changed the page (a click before a Type found no field).
      await this.settleAfter(started, openedBefore);
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
        const located = await callPage(page, 'locate', action.element);
        if (!located) return `element ${action.element} is not on the page or is covered`;
        const moved = performance.now();
        await page.mouse.move(located.x, located.y);
        if (action.kind === 'Hover') return undefined;
        const point = await this.pointAfterHover(page, action.element, moved);
        if (!point) return `element ${action.element} is not on the page or is covered once the pointer is over it`;
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
        const failure = await this.typeInto(page, action.element, action.argument);
        if (failure !== undefined) return failure;
        if (action.kind === 'Search') await page.keyboard.press('Enter');
        return undefined;
      }
      case 'Select Dropdown Option': {
        const result = await callPage(page, 'selectOption', action.element, action.argument);
        return result.ok ? undefined : result.error;
      }
      case 'Scroll Up':
      case 'Scroll Down': {
        const moved = await callPage(page, 'scroll', action.kind === 'Scroll Down' ? 1 : -1);
        return moved ? undefined : `nothing on the page can scroll ${action.kind === 'Scroll Down' ? 'down' : 'up'}`;
      }
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

  /**
   * Where to click element `id` now that the pointer rests over it: a page may redraw a control on hover
   * (an icon whose `:hover` image loads only then, its box empty meanwhile), so the page settles (without
   * the profile's minimum wait) and the element is located again.
   */
  private async pointAfterHover(page: Page, id: number, since: number): Promise<ClickTarget | null> {
    await settle(page, this.network, since, { ...this.options.settle, minWaitMs: 0 });
    return callPage(page, 'locate', id);
  }

  /**
   * Types `text` into the field the click on `element` focused: a text field key by key after selecting
   * and deleting what it held, a picker field (date, time, colour, range, ...) by setting its value whole
   * from the text ("03/15/2016" into a date). Returns why the field does not hold the text afterwards.
   */
  private async typeInto(page: Page, element: number, text: string): Promise<string | undefined> {
    const field = await callPage(page, 'focusField', element);
    if (!field) return `element ${element} is not a text field`;
    if (field.kind === 'picker') {
      const value = pickerValue(field.type, text);
      if (value === undefined) return `element ${element} is a ${field.type} field: ${JSON.stringify(text)} is not a ${field.type}`;
      const set = await callPage(page, 'setFieldValue', value);
      if (!set) return `element ${element} left the page while typing`;
      return holdsPicked(set.field, set.wanted) ? undefined : `element ${element} holds ${JSON.stringify(set.field.value)}, not ${JSON.stringify(set.wanted)}`;
    }
    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.press('Backspace');
    await page.keyboard.type(text);
    const now = await callPage(page, 'fieldState');
    if (!now) return `element ${element} left the page while typing`;
    // An invisible field's value is its script's business (a terminal takes each key and clears it): the page shows the effect.
    if (holdsTyped(now, text) || !now.shown) return undefined;
    // A password stays out of the step's record, as it does out of the observation.
    if (now.type === 'password') return `element ${element} does not hold the typed text`;
    return `element ${element} holds ${JSON.stringify(now.value)} after typing ${JSON.stringify(text)}`;
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
