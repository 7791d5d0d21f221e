/**
 * One MiniWoB++ episode in a page: where a task's type and seed travel (its start URL,
 * `__MINIWOB__/<type>.html?seed=N`), the init script that starts the seeded episode as the page loads
 * (and hides the page's reward panel and instruction from the observation), and reading its outcome.
 */
import type { BrowserContext, Page } from 'playwright-core';

export const MINIWOB_PLACEHOLDER = '__MINIWOB__';

export interface MiniwobTaskRef {
  type: string;
  seed: number;
}

export function miniwobStartUrl(ref: MiniwobTaskRef): string {
  return `${MINIWOB_PLACEHOLDER}/${ref.type}.html?seed=${ref.seed}`;
}

export function miniwobTaskId(ref: MiniwobTaskRef): string {
  return `miniwob:${ref.type}:${ref.seed}`;
}

/** The type and seed of a `miniwob:<type>:<seed>` task id; undefined for another backend's id. */
export function parseMiniwobTaskId(taskId: string): MiniwobTaskRef | undefined {
  const match = /^miniwob:([a-z0-9-]+):(\d+)$/.exec(taskId);
  return match ? { type: match[1]!, seed: Number(match[2]) } : undefined;
}

/** The task type and seed a start URL names; throws naming the URL when it is not a miniwob one. */
export function parseMiniwobStartUrl(startUrl: string): MiniwobTaskRef {
  const match = /^__MINIWOB__\/([a-z0-9-]+)\.html\?seed=(\d+)$/.exec(startUrl.trim());
  if (!match) throw new Error(`not a miniwob start URL (expected ${MINIWOB_PLACEHOLDER}/<task>.html?seed=N): ${startUrl}`);
  return { type: match[1]!, seed: Number(match[2]) };
}

/**
 * The page-side part, as source text (run by addInitScript in every frame; it acts in the top one):
 * after the page's own scripts set `window.onload` (which shows MiniWoB++'s START cover), it wraps it to
 * seed `Math.random` and start the episode at once; keeps the first ending's reward (the cover could
 * otherwise start an unseeded episode: starting again is disabled); hides the reward panel ("Last
 * reward", "Last 10 average", "Time left", "Episodes done"), the click canvas, the START cover and the
 * instruction (`#query`, which is the task's intent already) so the observation is the task area only.
 */
export function episodeScript(seed: number, timeLimitMs: number | null): string {
  return `(() => {
  if (window !== window.top) return;
  const seed = ${JSON.stringify(seed)};
  const timeLimitMs = ${JSON.stringify(timeLimitMs)};
  document.addEventListener('DOMContentLoaded', () => {
    const style = document.createElement('style');
    style.textContent = '#reward-display, #click-canvas, #sync-task-cover, #query { display: none !important; }';
    document.head.appendChild(style);
    const pageOnload = window.onload;
    window.onload = function (event) {
      if (pageOnload) pageOnload.call(window, event);
      if (typeof core === 'undefined' || typeof core.startEpisodeReal !== 'function') return;
      if (timeLimitMs !== null) core.EPISODE_MAX_TIME = timeLimitMs;
      Math.seedrandom(seed);
      const state = { seed, started: Date.now(), limitMs: core.EPISODE_MAX_TIME, query: '', ended: null };
      window.__webrlMiniwob = state;
      const endEpisode = core.endEpisode;
      core.endEpisode = function (reward, timeProportional, reason) {
        const first = core.EP_TIMER !== null && state.ended === null;
        endEpisode.apply(core, arguments);
        if (first) state.ended = { raw: WOB_RAW_REWARD_GLOBAL, reward: WOB_REWARD_GLOBAL, reason: WOB_REWARD_REASON == null ? null : String(WOB_REWARD_REASON), afterMs: Date.now() - state.started };
      };
      core.startEpisodeReal();
      core.startEpisodeReal = function () {};
      // The NL pages (email-inbox-nl-turk, ...) return {utterance, fields} outside test mode; the instruction is the utterance.
      const utterance = core.getUtterance();
      state.query = typeof utterance === 'string' ? utterance : String((utterance && utterance.utterance) || '');
      // The instruction's text drops an icon in it (click-menu-2's "the item with the <icon> icon"): there,
      // read #query with each jQuery UI icon named by its class ("ui-icon-disk": disk).
      const shown = document.getElementById('query');
      if (shown && shown.querySelector('.ui-icon')) {
        const query = shown.cloneNode(true);
        for (const icon of Array.from(query.querySelectorAll('.ui-icon'))) {
          const name = Array.from(icon.classList).find((c) => c.startsWith('ui-icon-'));
          if (name) icon.replaceWith(name.slice('ui-icon-'.length));
        }
        state.query = query.textContent.replace(/\\s+/g, ' ').trim();
      }
    };
  });
})();`;
}

/** How a MiniWoB++ episode ended, as its page reported it. */
export interface MiniwobResult {
  type: string;
  seed: number;
  /** The page's reward without its time penalty (-1 for a wrong answer or an expired episode); null when it never ended. */
  rawReward: number | null;
  /** The page's time-discounted reward. */
  reward: number | null;
  /** The page's reason (`timed out` when the time limit ran out), if it gave one. */
  reason: string | null;
  /** Whether the time limit had run out by the end of the episode (the page's timer, or by the clock when the page was stopped). */
  expired: boolean;
  /** 1 when the raw reward is positive, else 0. */
  score: number;
}

export class MiniwobPageError extends Error {
  override name = 'MiniwobPageError';
}

interface PageState {
  started: number;
  limitMs: number;
  query: string;
  ended: { raw: number; reward: number; reason: string | null; afterMs: number } | null;
}

/** Readies a fresh context for a seeded episode of a page it is about to load. */
export async function prepareMiniwobContext(context: BrowserContext, seed: number, timeLimitMs: number | null): Promise<void> {
  await context.addInitScript(episodeScript(seed, timeLimitMs));
}

async function pageState(page: Page): Promise<PageState | null> {
  return (await page.evaluate('window.__webrlMiniwob ?? null')) as PageState | null;
}

/** The started episode's instruction (`#query` as MiniWoB++ reads it); throws when the page started none. */
export async function startedQuery(page: Page, ref: MiniwobTaskRef): Promise<string> {
  const state = await pageState(page);
  if (!state) throw new MiniwobPageError(`the MiniWoB++ page ${ref.type}.html did not start an episode (it failed to load)`);
  return state.query;
}

/** Whether the page has ended its episode (its first ending: a decisive action, or its time running out). */
export async function episodeEnded(page: Page): Promise<boolean> {
  const state = await pageState(page);
  return state !== null && state.ended !== null;
}

/** Reads how the episode ended; an episode that did not end scores 0 (expired when its time had run out). */
export async function readResult(page: Page, ref: MiniwobTaskRef): Promise<MiniwobResult> {
  const state = await pageState(page).catch(() => null);
  if (!state) throw new MiniwobPageError(`the MiniWoB++ page ${ref.type}.html did not start an episode (it failed to load, or the episode left it)`);
  const ended = state.ended;
  const elapsed = ended ? ended.afterMs : Date.now() - state.started;
  const expired = ended ? ended.reason === 'timed out' : elapsed >= state.limitMs;
  const rawReward = ended ? ended.raw : expired ? -1 : null;
  return {
    ...ref,
    rawReward,
    reward: ended ? ended.reward : rawReward,
    reason: ended ? ended.reason : expired ? 'timed out' : null,
    expired,
    score: rawReward !== null && rawReward > 0 ? 1 : 0,
  };
}
