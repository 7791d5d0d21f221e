/**
 * The miniwob task source: each task is a task type and a seed (train and test splits from the two seed
 * ranges). Its intent is the page's own instruction: the source loads each task's page once, headless,
 * seeded exactly as its episodes will be, and reads `#query` once the episode has started (the same
 * text MiniWoB++'s Python environment gives an agent); the same observation feeds the task type's oracle
 * solver (oracle.ts), whose plan the task carries. A worker loads each split once.
 */
import { chromium, type Browser, type Page } from 'playwright-core';
import { observe, VIEWPORT } from '../../../browser/observe';
import type { Observation } from '../../../browser/contract';
import { callPage, PAGE_PROBE_SCRIPT } from '../../../browser/pageCall';
import { CHROMIUM_ARGS, ensureChromium } from '../../../infra/tools';
import { serveDirectory } from '../../../browser/staticServer';
import type { EnvironmentTask, Split } from '../contract';
import { TEXT_TASK_TYPES } from './catalog';
import { assertTaskPage } from './environment';
import { miniwobStartUrl, miniwobTaskId, prepareMiniwobContext, startedQuery, type MiniwobTaskRef } from './episode';
import { solveMiniwob } from './oracle';
import { ensureMiniwobPages } from './package';
import type { MiniwobSettings } from './settings';

/** The task types a campaign runs: its `taskTypes`, or the whole text subset. */
export function taskTypesOf(settings: MiniwobSettings): string[] {
  return settings.miniwob.taskTypes.length ? [...settings.miniwob.taskTypes] : [...TEXT_TASK_TYPES];
}

export function timeLimitMsOf(settings: MiniwobSettings): number | null {
  return settings.miniwob.timeLimit === 'page' ? null : settings.miniwob.timeLimit * 1000;
}

/** A split's tasks, by type then seed. */
export function splitRefs(settings: MiniwobSettings, split: Split): MiniwobTaskRef[] {
  const range = settings.miniwob.seeds[split];
  const refs: MiniwobTaskRef[] = [];
  for (const type of taskTypesOf(settings)) for (let seed = range.from; seed < range.to; seed++) refs.push({ type, seed });
  return refs;
}

/** At most this many Scroll Downs are read for a solver: MiniWoB++'s longest lists take four. */
const MAX_SCROLLED_VIEWS = 8;

/**
 * What an agent sees after each Scroll Down from the start page, until nothing moves: content a scrolling
 * box hides at the start (a list below the fold) is then in the solver's reach, read from observations only.
 */
async function scrolledViews(page: Page): Promise<Observation[]> {
  const views: Observation[] = [];
  while (views.length < MAX_SCROLLED_VIEWS && (await callPage(page, 'scroll', 1))) views.push(await observe(page));
  return views;
}

/** Loads each task's page seeded, reads its instruction and plans its oracle solution (a few pages at a time). */
export async function loadMiniwobTasks(
  refs: readonly MiniwobTaskRef[],
  timeLimitMs: number | null,
  options: { browser?: Browser; parallel?: number } = {},
): Promise<EnvironmentTask[]> {
  const pages = await ensureMiniwobPages();
  for (const type of new Set(refs.map((ref) => ref.type))) await assertTaskPage(pages.root, type);
  const server = await serveDirectory(pages.root);
  const browser = options.browser ?? (await chromium.launch({ executablePath: (await ensureChromium()).path, args: CHROMIUM_ARGS }));
  try {
    const tasks: EnvironmentTask[] = new Array(refs.length);
    let next = 0;
    const worker = async () => {
      for (let i = next++; i < refs.length; i = next++) {
        const ref = refs[i]!;
        const context = await browser.newContext({ viewport: VIEWPORT });
        try {
          // The probes an episode's executor installs: the solver reads the observation an episode sees.
          await context.addInitScript(PAGE_PROBE_SCRIPT);
          await prepareMiniwobContext(context, ref.seed, timeLimitMs);
          const page = await context.newPage();
          await page.goto(`${server.url}/miniwob/${ref.type}.html?seed=${ref.seed}`, { waitUntil: 'load' }).catch((error: Error) => {
            throw new Error(`the MiniWoB++ page ${ref.type}.html failed to load: ${error.message.split('\n')[0]}`);
          });
          const intent = await startedQuery(page, ref);
          if (!intent) throw new Error(`the MiniWoB++ page ${ref.type}.html (seed ${ref.seed}) shows no instruction`);
          const start = await observe(page);
          const plan = solveMiniwob(ref.type, intent, start, await scrolledViews(page));
          tasks[i] = {
            task_id: miniwobTaskId(ref),
            sites: ['miniwob'],
            start_url: miniwobStartUrl(ref),
            intent,
            intent_template: ref.type,
            instantiation_dict: { seed: ref.seed },
            require_login: false,
            require_reset: false,
            eval: { eval_types: ['page_reward'] },
            ...(plan ? { oracle: plan } : {}),
          };
        } finally {
          await context.close();
        }
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, options.parallel ?? 3) }, worker));
    return tasks;
  } finally {
    if (!options.browser) await browser.close();
    await server.close();
  }
}
