/**
 * Rollout throughput on the local fixture shop (test/browser/fixtures).
 *
 * 1. The same oracle episodes through our loop (observe -> oracle policy -> parse -> execute -> settle)
 *    and through a plain playwright-core script doing the same clicks and typing (locators with
 *    Playwright's auto-waiting, no observation), alternating in rounds so drifting machine load hits
 *    both alike; steps/s of each and their ratio, at concurrency 1.
 * 2. Our loop at concurrency 1, 2 and 4: steps/s, and per-step latency at concurrency 1.
 * 3. The mean step time (observe + policy + action + settle) per observation profile at concurrency 1:
 *    `default` and `webrl` (the reference's annotation and its 500 ms minimum wait), in the same rounds.
 *
 * A step is one oracle step (the final exit included) in both. Run: node --import tsx bench/rollout.ts
 * [episodes per round, default 9] [rounds, default 2]. Ends with one `BENCH <name> <value> <unit>` line
 * per figure.
 */
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { CHROMIUM_ARGS, ensureChromium } from '../infra/tools';
import type { ElementMatcher, OracleStep } from '../browser/contract';
import type { EpisodeStep } from '../browser/episodeRecord';
import { executorOptionsFor } from '../browser/executor';
import { VIEWPORT, type ObservationProfile } from '../browser/observe';
import { createOraclePolicy } from '../browser/policies/oracle';
import { BrowserPool } from '../browser/pool';
import { serveDirectory } from '../browser/staticServer';
import { createShopEnvironment, shopTasks, type ShopEnvironment, type ShopTask } from '../test/browser/fixtures/shop';
import { SITE_DIR } from '../test/browser/helpers';

const EPISODES = Number(process.argv[2] ?? 9);
const ROUNDS = Number(process.argv[3] ?? 2);

interface RunResult {
  steps: number;
  wallMs: number;
  passed: number;
  episodes: number;
  stepRecords: EpisodeStep[];
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The Playwright locator a hand-written script would use for a matcher. */
function locatorFor(page: Page, matcher: ElementMatcher): Locator {
  const attributes = Object.entries(matcher.attributes ?? {})
    .map(([name, value]) => `[${name}="${value}"]`)
    .join('');
  let locator = page.locator(`${matcher.tag ?? '*'}${attributes}`);
  if (matcher.text !== undefined) locator = locator.filter({ hasText: new RegExp(`^\\s*${escapeRegExp(matcher.text)}\\s*$`) });
  if (matcher.textIncludes !== undefined) locator = locator.filter({ hasText: matcher.textIncludes });
  return locator.nth(matcher.nth ?? 0);
}

async function typeInto(page: Page, locator: Locator, text: string): Promise<void> {
  await locator.click();
  await page.keyboard.press('ControlOrMeta+A');
  await page.keyboard.press('Backspace');
  await page.keyboard.type(text);
}

/** One oracle step by hand; returns the exit message when the step is the exit. */
async function rawStep(page: Page, step: OracleStep): Promise<string | undefined> {
  switch (step.action) {
    case 'Click':
      await locatorFor(page, step.target).click();
      return undefined;
    case 'Hover':
      await locatorFor(page, step.target).hover();
      return undefined;
    case 'Type':
    case 'Search':
      await typeInto(page, locatorFor(page, step.target), step.argument);
      if (step.action === 'Search') await page.keyboard.press('Enter');
      return undefined;
    case 'Select Dropdown Option': {
      const select = locatorFor(page, step.target);
      const wanted = step.argument.toLowerCase();
      const value = await select.evaluate(
        (element, text) => Array.from((element as HTMLSelectElement).options).find((o) => o.text.toLowerCase().includes(text))?.value ?? '',
        wanted,
      );
      await select.selectOption(value);
      return undefined;
    }
    case 'Scroll Up':
    case 'Scroll Down':
      await page.mouse.wheel(0, (step.action === 'Scroll Down' ? 1 : -1) * 480);
      return undefined;
    case 'Press Enter':
      await page.keyboard.press('Enter');
      return undefined;
    case 'Go Backward':
      await page.goBack();
      return undefined;
    case 'Go Forward':
      await page.goForward();
      return undefined;
    case 'exit':
      // The answer is read off the page the last action led to.
      await page.waitForLoadState('load');
      return step.message;
  }
}

async function runRaw(browser: Browser, tasks: ShopTask[], environment: ShopEnvironment): Promise<RunResult> {
  let steps = 0;
  let passed = 0;
  const started = performance.now();
  for (const task of tasks) {
    const context = await browser.newContext({ viewport: VIEWPORT });
    const prepared = await environment.prepareEpisode(context, task);
    const page = await context.newPage();
    await page.goto(prepared.startUrl);
    let answer: string | null = null;
    for (const step of task.oracle ?? []) {
      answer = (await rawStep(page, step)) ?? answer;
      steps++;
    }
    const evaluated = await prepared.evaluate(page, answer);
    passed += typeof evaluated === 'number' ? evaluated : evaluated.score;
    await prepared.dispose();
    await context.close();
  }
  return { steps, wallMs: performance.now() - started, passed, episodes: tasks.length, stepRecords: [] };
}

async function runOurs(pool: BrowserPool, tasks: ShopTask[], environment: ShopEnvironment, profile: ObservationProfile = 'default'): Promise<RunResult> {
  const policy = createOraclePolicy();
  const options = { executor: executorOptionsFor(profile) };
  const started = performance.now();
  const results = await pool.runAll(tasks.map((task) => ({ task, policy, environment, options })));
  const wallMs = performance.now() - started;
  const stepRecords = results.flatMap((r) => r.steps);
  return {
    steps: stepRecords.length,
    wallMs,
    passed: results.filter((r) => r.outcome.score === 1).length,
    episodes: results.length,
    stepRecords,
  };
}

function add(total: RunResult | undefined, run: RunResult): RunResult {
  if (!total) return run;
  return {
    steps: total.steps + run.steps,
    wallMs: total.wallMs + run.wallMs,
    passed: total.passed + run.passed,
    episodes: total.episodes + run.episodes,
    stepRecords: [...total.stepRecords, ...run.stepRecords],
  };
}

const stepsPerSecond = (run: RunResult) => run.steps / (run.wallMs / 1000);

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
}

function check(name: string, run: RunResult): void {
  console.log(`${name}: ${run.episodes} episodes, ${run.passed} passed, ${run.steps} steps in ${(run.wallMs / 1000).toFixed(1)} s`);
  if (run.passed !== run.episodes) throw new Error(`${name}: ${run.episodes - run.passed} episodes failed; the comparison would be meaningless`);
}

async function main(): Promise<void> {
  const server = await serveDirectory(SITE_DIR);
  const environment = createShopEnvironment(server.url);
  const tasks = shopTasks(EPISODES);
  const executablePath = (await ensureChromium()).path;
  const rawBrowser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
  const single = await BrowserPool.start({ size: 1, executablePath });
  let raw: RunResult | undefined;
  let ours: RunResult | undefined;
  let webrl: RunResult | undefined;
  try {
    // Warm both browsers (first renderer, caches, JIT) before measuring.
    await runRaw(rawBrowser, tasks.slice(0, 3), environment);
    await runOurs(single, tasks.slice(0, 3), environment);
    for (let round = 0; round < ROUNDS; round++) {
      raw = add(raw, await runRaw(rawBrowser, tasks, environment));
      ours = add(ours, await runOurs(single, tasks, environment));
      webrl = add(webrl, await runOurs(single, tasks, environment, 'webrl'));
    }
  } finally {
    await rawBrowser.close();
    await single.close();
  }
  check('raw playwright', raw!);
  check('our loop, concurrency 1', ours!);
  check('our loop, concurrency 1, webrl profile', webrl!);

  const perConcurrency: [number, RunResult][] = [[1, ours!]];
  for (const size of [2, 4]) {
    const pool = await BrowserPool.start({ size, executablePath });
    try {
      await runOurs(pool, tasks.slice(0, size), environment);
      const run = await runOurs(pool, [...tasks, ...tasks], environment);
      check(`our loop, concurrency ${size}`, run);
      perConcurrency.push([size, run]);
    } finally {
      await pool.close();
    }
  }
  await server.close();

  const stepMs = (s: EpisodeStep) => s.timings.observeMs + s.timings.policyMs + s.timings.actionMs + s.timings.settleMs;
  const latencies = ours!.stepRecords.map(stepMs);
  const mean = (run: RunResult, pick: (s: EpisodeStep) => number) => run.stepRecords.reduce((sum, s) => sum + pick(s), 0) / run.stepRecords.length;
  for (const [profile, run] of [
    ['default', ours!],
    ['webrl', webrl!],
  ] as const) {
    console.log(
      `per step at concurrency 1, ${profile} profile (mean): observe ${mean(run, (s) => s.timings.observeMs).toFixed(1)} ms, ` +
        `policy ${mean(run, (s) => s.timings.policyMs).toFixed(1)} ms, action ${mean(run, (s) => s.timings.actionMs).toFixed(1)} ms, ` +
        `settle ${mean(run, (s) => s.timings.settleMs).toFixed(1)} ms`,
    );
  }
  const figures: [string, number, string][] = [
    ['rollout.raw_steps_per_s', stepsPerSecond(raw!), 'steps/s'],
    ['rollout.ratio_vs_raw', stepsPerSecond(ours!) / stepsPerSecond(raw!), 'x'],
    ['rollout.step_latency_ms', quantile(latencies, 0.5), 'ms'],
    ['rollout.step_latency_p90_ms', quantile(latencies, 0.9), 'ms'],
    ['rollout.step_ms.default', mean(ours!, stepMs), 'ms'],
    ['rollout.step_ms.webrl', mean(webrl!, stepMs), 'ms'],
    ...perConcurrency.map(([size, run]): [string, number, string] => [`rollout.steps_per_s.c${size}`, stepsPerSecond(run), 'steps/s']),
  ];
  for (const [name, value, unit] of figures) console.log(`BENCH ${name} ${value.toFixed(value < 10 ? 3 : 1)} ${unit}`);
}

await main();
