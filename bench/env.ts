/**
 * Environment costs. The webarena backend against the embedded sites served by `webrl env serve` in
 * its own process: the oracle's success on exported test tasks (a seeded sample, the same number per
 * site, or all of them; a reset before every episode, one episode per site), the time per step there
 * and on the embedded backend over the same tasks, the same tasks in WebArena-Verified's format scored
 * by its official evaluator (the oracle's success, the evaluator's ms per episode), and each site's
 * reset through its HTTP hook. Then the embedded costs: the reset cost per episode (prepareEpisode + dispose: a fresh
 * copy-on-write state on all four sites and the cookie on a browser context), and oracle episodes
 * per second through the browser side's pool, episode loop and oracle policy at concurrency 1 and 4,
 * on a seeded mix of test tasks from every template. Last, MiniWoB++ (the miniwob backend): the oracle
 * over every task type with an oracle plan on seeds 0-4 (tasks loaded as the task source loads them, a
 * task whose page the solver cannot read counts as a failure; 2 episodes at a time), its success per
 * type (the check that each listed type is solvable from the observation), the mean ms per step there,
 * and the size of the text subset.
 * Run: node --import tsx bench/env.ts [episodes at c1, default 30] [resets, default 200]
 *      [webarena tasks per site, default 12; 0: every test task] [--cpu-burner] [--only miniwob|verified].
 * --cpu-burner spins a thread per core from the first episode on (a loaded machine: an infrastructure delay must
 * never score an episode as failed); --only miniwob runs the MiniWoB++ part alone, --only verified the WebArena-Verified part.
 * An episode that ends in an infrastructure failure is run again (up to 3 tries), as a campaign does.
 * Ends with one `BENCH <name> <value> <unit>` line per figure.
 */
import { chromium } from 'playwright-core';
import { CHROMIUM_ARGS, ensureChromium } from '../infra/tools';
import { BrowserPool } from '../browser/pool';
import { createOraclePolicy } from '../browser/policies/oracle';
import { EmbeddedEnvironment, toEpisodeTask } from '../env/embedded';
import { startEmbeddedSites } from '../env/embeddedSites';
import { Rng } from '../env/random';
import { generateTasks } from '../env/tasks/generate';
import { WebArenaEnvironment, WebArenaSites } from '../env/webarena/environment';
import { asWebArenaTask } from '../cli/env';
import { sharedVerifiedEvaluator } from '../env/evaluators/harnesses/verified/client';
import { parseTasks } from '../env/tasks/loader';
import type { WebArenaTask } from '../env/tasks/schema';
import { toVerifiedTask } from '../env/tasks/verified';
import { serveSites, servedWebArenaConfig } from '../test/harness/servedSites';
import { startCpuBurner } from '../test/harness/cpuBurner';
import type { EpisodeEnvironment } from '../browser/contract';
import { EMBEDDED_SITE_NAMES, type SiteUrls } from '../env/siteUrls';
import { TEXT_TASK_TYPES } from '../env/backends/miniwob/catalog';
import { MiniwobEnvironment } from '../env/backends/miniwob/environment';
import { ORACLE_TASK_TYPES } from '../env/backends/miniwob/oracle';
import { ensureMiniwobPages } from '../env/backends/miniwob/package';
import { loadMiniwobTasks } from '../env/backends/miniwob/tasks';
import { toEpisodeTask as miniwobEpisodeTask } from '../env/tasks/episodeTask';
import { serveDirectory } from '../browser/staticServer';
import { formatSuiteScore, miniwobSuiteScore } from '../env/backends/miniwob/suiteScore';

const argv = process.argv.slice(2);
const onlyAt = argv.indexOf('--only');
const ONLY = onlyAt >= 0 ? argv[onlyAt + 1] : undefined;
if (onlyAt >= 0 && ONLY !== 'miniwob' && ONLY !== 'verified')
  throw new Error(`--only takes miniwob or verified (the parts that run alone), got ${ONLY ?? 'nothing'}`);
const flags = new Set(argv.filter((arg) => arg === '--cpu-burner'));
const args = argv.filter((arg, i) => arg !== '--cpu-burner' && (onlyAt < 0 || (i !== onlyAt && i !== onlyAt + 1)));
const EPISODES = Number(args[0] ?? 30);
const RESETS = Number(args[1] ?? 200);
const WEBARENA_PER_SITE = Number(args[2] ?? 12);
/** Tries per episode: one that ends in an infrastructure failure runs again, as runTasks does in a campaign. */
const EPISODE_TRIES = 3;
const MINIWOB_SEEDS = [0, 1, 2, 3, 4];

/** MiniWoB++: the oracle on every type with a plan, 5 seeds each, per type and in all, and the time per step; its BENCH lines. */
async function miniwobBench(): Promise<string[]> {
  const pages = await ensureMiniwobPages();
  const server = await serveDirectory(pages.root);
  const tasks = await loadMiniwobTasks(
    ORACLE_TASK_TYPES.flatMap((type) => MINIWOB_SEEDS.map((seed) => ({ type, seed }))),
    null,
  );
  const pool = await BrowserPool.start({ size: 2 });
  const environment = new MiniwobEnvironment({ root: pages.root, baseUrl: server.url, timeLimitMs: null });
  const started = performance.now();
  const results = await Promise.all(
    tasks.map((task) => (task.oracle ? pool.runEpisode({ task: miniwobEpisodeTask(task, {}), policy: createOraclePolicy(), environment }) : undefined)),
  );
  const ms = performance.now() - started;
  await pool.close();
  await server.close();
  const steps = results.reduce((n, r) => n + (r?.outcome.steps ?? 0), 0);
  results.forEach((r, i) => {
    if (r?.outcome.score !== 1)
      console.log(`  miniwob not solved: ${tasks[i]!.task_id} ${r ? `${r.outcome.reason} ${r.outcome.detail ?? ''}` : '(no oracle plan for this instance)'}`);
  });
  const suite = miniwobSuiteScore(tasks.map((task, i) => ({ taskId: task.task_id, score: results[i]?.outcome.score ?? 0, infraFailure: false })));
  const solved = suite.types.reduce((n, t) => n + t.successes, 0);
  console.log(formatSuiteScore(suite));
  const unchecked = TEXT_TASK_TYPES.filter((type) => !ORACLE_TASK_TYPES.includes(type));
  console.log(`miniwob: ${solved}/${tasks.length} oracle episodes solved (${ORACLE_TASK_TYPES.length} types x ${MINIWOB_SEEDS.length} seeds, ${steps} steps)`);
  console.log(
    `miniwob: every seed solved for ${suite.types.filter((t) => t.rate === 1).length} of ${TEXT_TASK_TYPES.length} listed types${unchecked.length ? `; no oracle yet: ${unchecked.join(', ')}` : ''}`,
  );
  return [
    `BENCH env.miniwob.oracle_success ${(solved / tasks.length).toFixed(3)} fraction`,
    `BENCH env.miniwob.oracle_types ${ORACLE_TASK_TYPES.length} types`,
    `BENCH env.miniwob.solved_types ${suite.types.filter((t) => t.rate === 1).length} types`,
    `BENCH env.miniwob.task_types ${TEXT_TASK_TYPES.length} types`,
    `BENCH env.miniwob.step_ms ${(ms / Math.max(1, steps)).toFixed(1)} ms`,
  ];
}

if (ONLY === 'miniwob') {
  for (const line of await miniwobBench()) console.log(line);
  process.exit(0);
}

const sites = await startEmbeddedSites();
const tasks = new Rng(7).shuffle(generateTasks('test'));
const env = new EmbeddedEnvironment({ siteUrls: sites.urls, tasks });

// The webarena backend on served sites, and the embedded backend on the same tasks: ms per step.
const served = await serveSites();
Object.assign(process.env, served.credentials);
const webarenaConfig = servedWebArenaConfig(served, 'unused.json', (site) => ({
  maxConcurrentEpisodes: 1,
  reset: { hook: served.resetHook(site, 'http'), policy: { everyNEpisodes: 1 } },
}));
const sample = WEBARENA_PER_SITE > 0 ? EMBEDDED_SITE_NAMES.flatMap((site) => tasks.filter((t) => t.sites[0] === site).slice(0, WEBARENA_PER_SITE)) : tasks;
const exported = sample.map(asWebArenaTask);
// The same tasks in WebArena-Verified's format (`webrl env export --format webarena-verified`), scored by its official evaluator.
const exportedVerified = parseTasks(sample.map(toVerifiedTask));
async function oracleRun(
  label: string,
  environment: EpisodeEnvironment,
  urls: SiteUrls,
  pool: BrowserPool,
  taskSet: readonly WebArenaTask[] = exported,
): Promise<{ solved: number; stepMs: number; evaluatorMs: number }> {
  const started = performance.now();
  let done = 0;
  let retried = 0;
  const results = await Promise.all(
    taskSet.map(async (task) => {
      let result = await pool.runEpisode({ task: toEpisodeTask(task, urls), policy: createOraclePolicy(), environment });
      for (let tries = 1; result.outcome.infraFailure && tries < EPISODE_TRIES; tries++) {
        console.log(`  task ${result.outcome.taskId}: infrastructure failure (${result.outcome.reason}: ${result.outcome.detail ?? ''}); running it again`);
        retried++;
        result = await pool.runEpisode({ task: toEpisodeTask(task, urls), policy: createOraclePolicy(), environment });
      }
      if (++done % 10 === 0 || done === taskSet.length) console.log(`${label}: ${done}/${taskSet.length} oracle episodes`);
      return result;
    }),
  );
  if (retried) console.log(`${label}: ${retried} episodes run again after an infrastructure failure`);
  const steps = results.reduce((n, r) => n + r.outcome.steps, 0);
  for (const { outcome } of results.filter((r) => r.outcome.score !== 1))
    console.log(`  not solved: task ${outcome.taskId} ${outcome.reason} ${outcome.detail ?? ''}`);
  const evaluatorMs = results.reduce((ms, r) => ms + Number(r.outcome.evaluation?.evaluator_ms ?? 0), 0) / Math.max(1, results.length);
  return { solved: results.filter((r) => r.outcome.score === 1).length, stepMs: (performance.now() - started) / Math.max(1, steps), evaluatorMs };
}
// Started once the sites serve (their process starts in its own time), it loads every episode after.
const burner = flags.has('--cpu-burner') ? startCpuBurner() : undefined;
if (burner) console.log(`CPU burner: ${burner.threads} threads spinning for the rest of the run`);
const comparePool = await BrowserPool.start({ size: 4 });
const webarenaSites = new WebArenaSites(webarenaConfig, () => comparePool.openContext());
const verifiedEnvironment = new WebArenaEnvironment(webarenaSites, exportedVerified, { harness: 'webarena-verified' });
const verifiedOracleRun = () => oracleRun('webarena-verified harness', verifiedEnvironment, webarenaSites.urls, comparePool, exportedVerified);
const verifiedFigures = (run: { solved: number; evaluatorMs: number }) => [
  `BENCH env.webarena_verified.oracle_success ${(run.solved / exportedVerified.length).toFixed(3)} fraction`,
  `BENCH env.webarena_verified.evaluator_ms ${run.evaluatorMs.toFixed(1)} ms`,
];
if (ONLY === 'verified') {
  const run = await verifiedOracleRun();
  (await sharedVerifiedEvaluator()).close();
  await burner?.stop();
  await Promise.all([comparePool.close(), served.stop(), sites.stop()]);
  console.log(`webarena-verified harness: ${run.solved}/${exportedVerified.length} solved${burner ? ` beside a ${burner.threads}-thread CPU burner` : ''}`);
  for (const line of verifiedFigures(run)) console.log(line);
  process.exit(0);
}
const webarenaRun = await oracleRun('webarena backend', new WebArenaEnvironment(webarenaSites, exported), webarenaSites.urls, comparePool);
const embeddedRun = await oracleRun('embedded backend', env, sites.urls, comparePool);
const verifiedRun = await verifiedOracleRun();
(await sharedVerifiedEvaluator()).close();
const resetMsBySite: Record<string, number> = {};
for (const site of webarenaSites.sites) {
  for (let i = 0; i < 5; i++) await webarenaSites.reset(site);
  const times = webarenaSites.resets.get(site.name)!.slice(-5);
  resetMsBySite[site.name] = times.reduce((a, b) => a + b, 0) / times.length;
}
await comparePool.close();
await served.stop();
console.log(`webarena backend: ${webarenaRun.solved}/${exported.length} test tasks solved by the oracle`);
console.log(
  `webarena-verified harness: ${verifiedRun.solved}/${exportedVerified.length} solved, ${verifiedRun.evaluatorMs.toFixed(1)} ms of the official evaluator per episode`,
);

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

await burner?.stop();
console.log(`BENCH env.webarena.oracle_success ${(webarenaRun.solved / exported.length).toFixed(3)} fraction`);
console.log(`BENCH env.webarena.step_ms ${webarenaRun.stepMs.toFixed(1)} ms`);
for (const line of verifiedFigures(verifiedRun)) console.log(line);
console.log(`BENCH env.embedded.step_ms ${embeddedRun.stepMs.toFixed(1)} ms`);
for (const [site, ms] of Object.entries(resetMsBySite)) console.log(`BENCH env.reset_ms.${site} ${ms.toFixed(2)} ms`);
console.log(`BENCH env.reset_ms ${resetMs.toFixed(2)} ms`);
console.log(`BENCH env.oracle_episodes_per_s.c1 ${c1.toFixed(2)} episodes/s`);
console.log(`BENCH env.oracle_episodes_per_s.c4 ${c4.toFixed(2)} episodes/s`);
for (const line of await miniwobBench()) console.log(line);
