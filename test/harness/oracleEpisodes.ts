/**
 * Oracle episodes in real Chromium for the environment tests: the seeded task sample (one task of
 * every template; WEBRL_ENV_ORACLE_ALL=1 takes every train and test task), and a suite fixture that
 * starts the embedded sites, a browser pool and a bare browser around a describe block.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { chromium, type Browser } from 'playwright-core';
import type { EpisodeResult } from '../../browser/episode';
import { BrowserPool } from '../../browser/pool';
import { createOraclePolicy } from '../../browser/policies/oracle';
import { CHROMIUM_ARGS, ensureChromium } from '../../infra/tools';
import { EmbeddedEnvironment, toEpisodeTask } from '../../env/embedded';
import { startEmbeddedSites, type EmbeddedSites } from '../../env/embeddedSites';
import { Rng } from '../../env/random';
import { generateSplits } from '../../env/tasks/generate';
import type { WebArenaTask } from '../../env/tasks/schema';

/**
 * One seeded task of every template: each template's plan and evaluator is what a task of it runs, so
 * more tasks of a template repeat the same check on other values (the suite's time is kept for
 * checks that differ; WEBRL_ENV_ORACLE_ALL=1 runs all of them).
 */
export function oracleSample(): WebArenaTask[] {
  const { train, test } = generateSplits();
  const tasks = [...train, ...test];
  if (process.env.WEBRL_ENV_ORACLE_ALL === '1') return tasks;
  const chosen = new Map<number | undefined, WebArenaTask>();
  for (const task of new Rng(20241103).shuffle(tasks)) if (!chosen.has(task.intent_template_id)) chosen.set(task.intent_template_id, task);
  return [...chosen.values()];
}

export interface OracleFixture {
  readonly sites: EmbeddedSites;
  readonly env: EmbeddedEnvironment;
  readonly browser: Browser;
  /** Runs an episode with the oracle policy, retrying infrastructure failures as the episode contract asks callers to. */
  episode(task: ReturnType<typeof toEpisodeTask>): Promise<EpisodeResult>;
}

/** Registers before/after hooks in the calling describe block; the fixture's fields are set once `before` ran. */
export function useOracleFixture(tasks: readonly WebArenaTask[]): OracleFixture {
  let pool: BrowserPool;
  const fixture = {
    async episode(task: ReturnType<typeof toEpisodeTask>) {
      const policy = createOraclePolicy();
      let result = await pool.runEpisode({ task, policy, environment: fixture.env });
      for (let retry = 0; retry < 2 && result.outcome.infraFailure; retry++) result = await pool.runEpisode({ task, policy, environment: fixture.env });
      return result;
    },
  } as OracleFixture & { sites: EmbeddedSites; env: EmbeddedEnvironment; browser: Browser };
  before(async () => {
    fixture.sites = await startEmbeddedSites();
    fixture.env = new EmbeddedEnvironment({ siteUrls: fixture.sites.urls, tasks: [...tasks] });
    pool = await BrowserPool.start({ size: 3 });
    fixture.browser = await chromium.launch({ executablePath: (await ensureChromium()).path, args: CHROMIUM_ARGS });
  });
  after(async () => {
    await pool?.close();
    await fixture.browser?.close();
    await fixture.sites?.stop();
  });
  return fixture;
}

/**
 * The oracle solves every sampled task of `site`. One test file per site, so that no file comes near
 * the suite's per-file timeout on a busy 2-core machine (an earlier 200-task sample took 775 s in one file there).
 */
export function describeOracleSolves(site: string): void {
  const tasks = oracleSample().filter((task) => task.sites[0] === site);
  describe(`oracle solutions in real Chromium: ${site}`, () => {
    const oracle = useOracleFixture(tasks);
    test(`solves every sampled ${site} task (${tasks.length} tasks)`, async () => {
      assert.ok(tasks.length > 0);
      const failures: string[] = [];
      await Promise.all(
        tasks.map(async (task) => {
          const { outcome } = await oracle.episode(toEpisodeTask(task, oracle.sites.urls));
          if (outcome.score !== 1 || outcome.reason !== 'exit')
            failures.push(`task ${task.task_id} (${task.intent}): ${outcome.reason} score ${outcome.score} ${outcome.detail ?? ''}`);
        }),
      );
      assert.deepEqual(failures, []);
    });
  });
}
