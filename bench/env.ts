/**
 * Embedded-environment costs: the reset cost per episode (prepareEpisode + dispose: a fresh
 * copy-on-write state on all four sites and the cookie on a browser context), and oracle episodes
 * per second through the browser side's pool, episode loop and oracle policy at concurrency 1 and 4,
 * on a seeded mix of test tasks from every template.
 * Run: node --import tsx bench/env.ts [episodes at c1, default 30] [resets, default 200].
 * Ends with one `BENCH <name> <value> <unit>` line per figure.
 */
import { chromium } from 'playwright-core';
import { CHROMIUM_ARGS, ensureChromium } from '../infra/tools';
import { BrowserPool } from '../browser/pool';
import { createOraclePolicy } from '../browser/policies/oracle';
import { EmbeddedEnvironment, toEpisodeTask } from '../env/embedded';
import { startEmbeddedSites } from '../env/embedded-sites';
import { Rng } from '../env/random';
import { generateTasks } from '../env/tasks/generate';

const EPISODES = Number(process.argv[2] ?? 30);
const RESETS = Number(process.argv[3] ?? 200);

const sites = await startEmbeddedSites();
const tasks = new Rng(7).shuffle(generateTasks('test'));
const env = new EmbeddedEnvironment({ siteUrls: sites.urls, tasks });

// Reset cost, measured on one live browser context as the episode loop would use it.
const browser = await chromium.launch({ executablePath: (await ensureChromium()).path, args: CHROMIUM_ARGS });
const context = await browser.newContext();
const episodeTask = (i: number) => {
  const task = tasks[i % tasks.length];
  if (!task) throw new Error('no tasks');
  return toEpisodeTask(task, sites.urls);
};
for (let i = 0; i < 20; i++) await (await env.prepareEpisode(context, episodeTask(i))).dispose();
const resetStart = performance.now();
for (let i = 0; i < RESETS; i++) await (await env.prepareEpisode(context, episodeTask(i))).dispose();
const resetMs = (performance.now() - resetStart) / RESETS;
await browser.close();
console.log(`reset (prepare + dispose): ${resetMs.toFixed(2)} ms per episode over ${RESETS} episodes`);

async function throughput(concurrency: number, count: number): Promise<number> {
  const pool = await BrowserPool.start({ size: concurrency });
  const policy = createOraclePolicy();
  await pool.runEpisode({ task: episodeTask(0), policy, environment: env });
  const started = performance.now();
  const results = await Promise.all(Array.from({ length: count }, (_, i) => pool.runEpisode({ task: episodeTask(i), policy, environment: env })));
  const seconds = (performance.now() - started) / 1000;
  await pool.close();
  const solved = results.filter((r) => r.outcome.score === 1).length;
  const steps = results.reduce((n, r) => n + r.outcome.steps, 0);
  console.log(`concurrency ${concurrency}: ${count} oracle episodes (${steps} steps, ${solved} solved) in ${seconds.toFixed(1)} s`);
  for (const { outcome } of results.filter((r) => r.outcome.score !== 1)) {
    console.log(`  not solved: task ${outcome.taskId} ${outcome.reason}${outcome.infraFailure ? ' (infrastructure)' : ''} ${outcome.detail ?? ''}`);
  }
  return count / seconds;
}

const c1 = await throughput(1, EPISODES);
const c4 = await throughput(4, EPISODES * 2);
await sites.stop();

console.log(`BENCH env.reset_ms ${resetMs.toFixed(2)} ms`);
console.log(`BENCH env.oracle_episodes_per_s.c1 ${c1.toFixed(2)} episodes/s`);
console.log(`BENCH env.oracle_episodes_per_s.c4 ${c4.toFixed(2)} episodes/s`);
