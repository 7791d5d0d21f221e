/**
 * Environment costs. The webarena backend against the embedded sites served by `webrl env serve` in
 * its own process: the oracle's success on exported test tasks (a seeded sample, the same number per
 * site, or all of them; a reset before every episode, one episode per site), the time per step there
 * and on the embedded backend over the same tasks, and each site's reset through its HTTP hook. Then the embedded costs: the reset cost per episode (prepareEpisode + dispose: a fresh
 * copy-on-write state on all four sites and the cookie on a browser context), and oracle episodes
 * per second through the browser side's pool, episode loop and oracle policy at concurrency 1 and 4,
 * on a seeded mix of test tasks from every template.
 * Run: node --import tsx bench/env.ts [episodes at c1, default 30] [resets, default 200]
 *      [webarena tasks per site, default 12; 0: every test task].
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
import { WebArenaEnvironment, WebArenaSites } from '../env/webarena/environment';
import { asWebArenaTask } from '../cli/env';
import { serveSites, servedWebArenaConfig } from '../test/harness/servedSites';
import type { EpisodeEnvironment } from '../browser/contract';
import { EMBEDDED_SITE_NAMES, type SiteUrls } from '../env/site-urls';

const EPISODES = Number(process.argv[2] ?? 30);
const RESETS = Number(process.argv[3] ?? 200);
const WEBARENA_PER_SITE = Number(process.argv[4] ?? 12);

const sites = await startEmbeddedSites();
const tasks = new Rng(7).shuffle(generateTasks('test'));
const env = new EmbeddedEnvironment({ siteUrls: sites.urls, tasks });

// The webarena backend on served sites, and the embedded backend on the same tasks: ms per step.
const served = await serveSites();
Object.assign(process.env, served.credentials);
const webarenaConfig = servedWebArenaConfig(served, 'unused.json', (site) => ({ maxConcurrentEpisodes: 1, reset: { hook: served.resetHook(site, 'http'), policy: { everyNEpisodes: 1 } } }));
const sample = WEBARENA_PER_SITE > 0 ? EMBEDDED_SITE_NAMES.flatMap((site) => tasks.filter((t) => t.sites[0] === site).slice(0, WEBARENA_PER_SITE)) : tasks;
const exported = sample.map(asWebArenaTask);
async function oracleRun(label: string, environment: EpisodeEnvironment, urls: SiteUrls, pool: BrowserPool): Promise<{ solved: number; stepMs: number }> {
  const started = performance.now();
  let done = 0;
  const results = await Promise.all(
    exported.map(async (task) => {
      const result = await pool.runEpisode({ task: toEpisodeTask(task, urls), policy: createOraclePolicy(), environment });
      if (++done % 10 === 0 || done === exported.length) console.log(`${label}: ${done}/${exported.length} oracle episodes`);
      return result;
    }),
  );
  const steps = results.reduce((n, r) => n + r.outcome.steps, 0);
  for (const { outcome } of results.filter((r) => r.outcome.score !== 1)) console.log(`  not solved: task ${outcome.taskId} ${outcome.reason} ${outcome.detail ?? ''}`);
  return { solved: results.filter((r) => r.outcome.score === 1).length, stepMs: (performance.now() - started) / Math.max(1, steps) };
}
const comparePool = await BrowserPool.start({ size: 4 });
const webarenaSites = new WebArenaSites(webarenaConfig, () => comparePool.openContext());
const webarenaRun = await oracleRun('webarena backend', new WebArenaEnvironment(webarenaSites, exported), webarenaSites.urls, comparePool);
const embeddedRun = await oracleRun('embedded backend', env, sites.urls, comparePool);
const resetMsBySite: Record<string, number> = {};
for (const site of webarenaSites.sites) {
  for (let i = 0; i < 5; i++) await webarenaSites.reset(site);
  const times = webarenaSites.resets.get(site.name)!.slice(-5);
  resetMsBySite[site.name] = times.reduce((a, b) => a + b, 0) / times.length;
}
await comparePool.close();
await served.stop();
console.log(`webarena backend: ${webarenaRun.solved}/${exported.length} test tasks solved by the oracle`);

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

console.log(`BENCH env.webarena.oracle_success ${(webarenaRun.solved / exported.length).toFixed(3)} fraction`);
console.log(`BENCH env.webarena.step_ms ${webarenaRun.stepMs.toFixed(1)} ms`);
console.log(`BENCH env.embedded.step_ms ${embeddedRun.stepMs.toFixed(1)} ms`);
for (const [site, ms] of Object.entries(resetMsBySite)) console.log(`BENCH env.reset_ms.${site} ${ms.toFixed(2)} ms`);
console.log(`BENCH env.reset_ms ${resetMs.toFixed(2)} ms`);
console.log(`BENCH env.oracle_episodes_per_s.c1 ${c1.toFixed(2)} episodes/s`);
console.log(`BENCH env.oracle_episodes_per_s.c4 ${c4.toFixed(2)} episodes/s`);
