/**
 * `webrl rollout`: runs episodes with a policy in a pool of browser contexts, writes one trace per
 * trajectory (traces/), WebRL's score file per trajectory (actions/<trace>.json), `outcomes.jsonl` and
 * `summary.json` under --out, shows progress, prints each outcome and a summary. The tasks come from a task file (`--tasks`: plain tasks run on their start URLs,
 * optionally a served fixture directory, and are scored by the static environment; the environment is
 * pluggable with `createEnvironment`) or from the embedded environment (`--split`: its generated tasks,
 * run on the four embedded sites started here and scored by their evaluators) or from MiniWoB++
 * (`--miniwob`: every text task type, or the ones named, on a seed range; scored by the pages, with the
 * per-type success and the mean over types printed as papers report them). The policy may be a
 * trained ONNX actor (`--policy actor --checkpoint FILE`), e.g. a campaign's phase checkpoint.
 * The exit code is 1 when any episode ended as an infrastructure failure (those should be retried).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { MultiBar, Presets } from 'cli-progress';
import type { EpisodeEnvironment } from '../browser/contract';
import type { EpisodeRequest } from '../browser/episode';
import type { EpisodeOutcome } from '../browser/episodeRecord';
import { executorOptionsFor } from '../browser/executor';
import { OBSERVATION_PROFILES, type ObservationProfile } from '../browser/observe';
import { createOpenAIPolicy } from '../browser/policies/openai';
import { createOraclePolicy } from '../browser/policies/oracle';
import type { Policy, PolicyTask } from '../browser/policies/policy';
import { DEFAULT_MAX_TOKENS, STOP_TOKEN } from '../browser/policies/prompt';
import { createRandomPolicy } from '../browser/policies/random';
import { BrowserPool } from '../browser/pool';
import { createStaticEnvironment } from '../browser/staticEnvironment';
import { serveDirectory } from '../browser/staticServer';
import { loadRolloutTasks } from '../browser/tasks';
import { LocalTraceSink } from '../browser/traces';
import { startEmbeddedSites } from '../env/embeddedSites';
import { EmbeddedEnvironment, toEpisodeTask } from '../env/embedded';
import { DEFAULT_SEED } from '../env/world';
import { EXCLUDED_TASK_TYPES, isTextTaskType, TEXT_TASK_TYPES } from '../env/backends/miniwob/catalog';
import { MiniwobEnvironment } from '../env/backends/miniwob/environment';
import { ensureMiniwobPages } from '../env/backends/miniwob/package';
import { formatSuiteScore, miniwobSuiteScore, suiteScoreBenchLines } from '../env/backends/miniwob/suiteScore';
import { loadMiniwobTasks } from '../env/backends/miniwob/tasks';
import { toEpisodeTask as storedEpisodeTask } from '../env/tasks/episodeTask';
import { Actor } from '../models/actor';
import { createActorPolicy } from '../models/actorPolicy';
import { loadModel } from '../models/checkpoint';
import { parseSeed, selectEmbeddedTasks } from './env';

export interface RolloutSetup {
  tasks: PolicyTask[];
  /** URL of the directory served with --serve, if any. */
  baseUrl?: string;
}

export interface RolloutCommandDeps {
  /** The environment episodes run in; default: the static environment. */
  createEnvironment?: (setup: RolloutSetup) => EpisodeEnvironment | Promise<EpisodeEnvironment>;
  /** Reads --tasks; default: the JSON array format of browser/tasks.ts. */
  loadTasks?: (file: string) => Promise<PolicyTask[]>;
}

interface RolloutOptions {
  tasks?: string;
  split?: string;
  miniwob?: string | true;
  miniwobSeeds: { from: number; to: number };
  timeLimit: number | 'page';
  site?: string;
  limit?: number;
  worldSeed: number;
  policy: 'oracle' | 'random' | 'openai' | 'actor';
  checkpoint?: string;
  concurrency: number;
  out: string;
  serve?: string;
  maxSteps: number;
  seed: number;
  model?: string;
  baseUrl?: string;
  temperature: number;
  maxTokens: number;
  stop: string[];
  apiKeyEnv: string;
  screenshots: boolean;
  observation?: ObservationProfile;
}

function positiveInteger(value: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1) throw new InvalidArgumentError('expected a positive integer');
  return number;
}

function seedRange(value: string): { from: number; to: number } {
  const match = /^(\d+):(\d+)$/.exec(value);
  if (!match || Number(match[2]) <= Number(match[1])) throw new InvalidArgumentError('expected FROM:TO with TO > FROM, e.g. 1000:1003');
  return { from: Number(match[1]), to: Number(match[2]) };
}

function timeLimit(value: string): number | 'page' {
  if (value === 'page') return value;
  const seconds = Number(value);
  if (!Number.isFinite(seconds) || seconds <= 0) throw new InvalidArgumentError("expected 'page' or a number of seconds");
  return seconds;
}

function finiteNumber(value: string): number {
  const number = Number(value);
  if (!Number.isFinite(number)) throw new InvalidArgumentError('expected a number');
  return number;
}

async function createPolicy(options: RolloutOptions, tasks: PolicyTask[]): Promise<Policy> {
  switch (options.policy) {
    case 'oracle': {
      const missing = tasks.filter((t) => !t.oracle).map((t) => t.task_id);
      // A suite is scored whole: its tasks without a plan are failures of the oracle, as of any policy.
      if (missing.length > 0 && options.miniwob !== undefined) console.log(`${missing.length} tasks have no oracle plan: they count as failures`);
      else if (missing.length > 0) throw new Error(`--policy oracle needs an oracle plan; tasks without one: ${missing.join(', ')}`);
      return createOraclePolicy();
    }
    case 'random':
      return createRandomPolicy({ seed: options.seed });
    case 'actor': {
      if (!options.checkpoint) throw new Error('--policy actor needs --checkpoint (an actor .onnx file with its .json card)');
      const actor = new Actor(await loadModel(resolve(options.checkpoint), { kind: 'actor' }));
      // Greedy by default, as evaluation runs it; a temperature samples, seeded per task and round.
      return createActorPolicy(actor, options.temperature > 0 ? { mode: 'sample', temperature: options.temperature, seed: options.seed } : { mode: 'greedy' });
    }
    case 'openai':
      if (!options.model || !options.baseUrl) throw new Error('--policy openai needs --model and --base-url');
      return createOpenAIPolicy({
        baseURL: options.baseUrl,
        model: options.model,
        temperature: options.temperature,
        maxTokens: options.maxTokens,
        stop: options.stop,
        apiKeyEnv: options.apiKeyEnv,
      });
  }
}

function describeOutcome(o: EpisodeOutcome): string {
  const status = o.infraFailure ? 'INFRA' : o.score >= 1 ? 'PASS' : 'FAIL';
  const answer = o.answer === null ? '' : ` answer=${JSON.stringify(o.answer.slice(0, 60))}`;
  const detail = o.detail ? ` (${o.detail.slice(0, 120)})` : '';
  return `${status} task ${o.taskId}: score ${o.score}, ${o.steps} steps, ${o.reason}${answer}, ${o.durationMs} ms${detail}`;
}

interface RolloutSummary {
  episodes: number;
  passed: number;
  meanScore: number;
  infraFailures: number;
  reasons: Record<string, number>;
  steps: number;
  wallSeconds: number;
  stepsPerSecond: number;
}

function summarise(outcomes: EpisodeOutcome[], wallMs: number): RolloutSummary {
  const scored = outcomes.filter((o) => !o.infraFailure);
  const reasons: Record<string, number> = {};
  for (const o of outcomes) reasons[o.reason] = (reasons[o.reason] ?? 0) + 1;
  const steps = outcomes.reduce((sum, o) => sum + o.steps, 0);
  return {
    episodes: outcomes.length,
    passed: scored.filter((o) => o.score >= 1).length,
    meanScore: scored.length > 0 ? scored.reduce((sum, o) => sum + o.score, 0) / scored.length : 0,
    infraFailures: outcomes.length - scored.length,
    reasons,
    steps,
    wallSeconds: wallMs / 1000,
    stepsPerSecond: wallMs > 0 ? steps / (wallMs / 1000) : 0,
  };
}

interface TaskSource {
  tasks: PolicyTask[];
  environment: EpisodeEnvironment;
  close(): Promise<void>;
}

/** `--split`: the embedded environment's tasks on its four sites, started for this run. */
async function embeddedSource(options: RolloutOptions & { split: string }): Promise<TaskSource> {
  const selected = (await selectEmbeddedTasks({ split: options.split, site: options.site, seed: options.worldSeed })).slice(0, options.limit);
  if (selected.length === 0) throw new Error(`no ${options.split} tasks${options.site ? ` on ${options.site}` : ''}`);
  const sites = await startEmbeddedSites({ seed: options.worldSeed });
  return {
    tasks: selected.map((task) => toEpisodeTask(task, sites.urls)),
    environment: new EmbeddedEnvironment({ siteUrls: sites.urls, tasks: selected }),
    close: () => sites.stop(),
  };
}

/** `--tasks`: a task file, on a served directory if asked, in the given or the static environment. */
async function fileSource(options: RolloutOptions & { tasks: string }, deps: RolloutCommandDeps): Promise<TaskSource> {
  const tasks = await (deps.loadTasks ?? loadRolloutTasks)(resolve(options.tasks));
  const server = options.serve ? await serveDirectory(options.serve) : undefined;
  try {
    const setup: RolloutSetup = server ? { tasks, baseUrl: server.url } : { tasks };
    const environment = await (deps.createEnvironment ?? createStaticEnvironment)(setup);
    return { tasks, environment, close: async () => server?.close() };
  } catch (error) {
    await server?.close();
    throw error;
  }
}

/** `--miniwob`: MiniWoB++ task types (all of the text subset, or the ones named) on the seed range, served here. */
async function miniwobSource(options: RolloutOptions): Promise<TaskSource> {
  const types = options.miniwob === true || options.miniwob === undefined ? [...TEXT_TASK_TYPES] : options.miniwob.split(',').map((t) => t.trim());
  for (const type of types) {
    if (type in EXCLUDED_TASK_TYPES) throw new Error(`--miniwob: task type ${type} is left out of the text subset: ${EXCLUDED_TASK_TYPES[type]}`);
    if (!isTextTaskType(type)) throw new Error(`--miniwob: miniwob has no task type ${type}`);
  }
  const timeLimitMs = options.timeLimit === 'page' ? null : options.timeLimit * 1000;
  const refs = types.flatMap((type) =>
    Array.from({ length: options.miniwobSeeds.to - options.miniwobSeeds.from }, (_, i) => ({ type, seed: options.miniwobSeeds.from + i })),
  );
  const tasks = await loadMiniwobTasks(refs, timeLimitMs);
  const pages = await ensureMiniwobPages();
  const server = await serveDirectory(pages.root);
  return {
    tasks: tasks.map((task) => storedEpisodeTask(task, {})),
    environment: new MiniwobEnvironment({ root: pages.root, baseUrl: server.url, timeLimitMs }),
    close: () => server.close(),
  };
}

async function taskSource(options: RolloutOptions, deps: RolloutCommandDeps): Promise<TaskSource> {
  const sources = [options.tasks, options.split, options.miniwob].filter((source) => source !== undefined).length;
  if (sources !== 1) throw new Error('give one of --tasks FILE, --split train|test or --miniwob [types]');
  if (options.miniwob !== undefined) {
    if (options.serve || options.site !== undefined || options.limit !== undefined) throw new Error('--serve, --site and --limit do not go with --miniwob');
    return miniwobSource(options);
  }
  if (options.split !== undefined) {
    if (options.serve) throw new Error('--serve goes with --tasks; --split runs on the embedded sites');
    return embeddedSource({ ...options, split: options.split });
  }
  if (options.site !== undefined || options.limit !== undefined) throw new Error('--site and --limit go with --split');
  return fileSource({ ...options, tasks: options.tasks! }, deps);
}

async function runRollout(options: RolloutOptions, deps: RolloutCommandDeps): Promise<void> {
  const source = await taskSource(options, deps);
  try {
    await runEpisodes(options, source);
  } finally {
    await source.close();
  }
}

async function runEpisodes(options: RolloutOptions, { tasks, environment }: TaskSource): Promise<void> {
  const policy = await createPolicy(options, tasks);
  const out = resolve(options.out);
  await mkdir(out, { recursive: true });
  const pool = await BrowserPool.start({ size: options.concurrency, log: (m) => console.error(m) });
  // The bar draws on a terminal only; elsewhere (CI, logs) the per-task lines are the progress.
  const bars = process.stderr.isTTY
    ? new MultiBar({ format: 'rollout [{bar}] {value}/{total} episodes | {passed} passed | {infra} infra | {eta}s left' }, Presets.shades_classic)
    : undefined;
  const bar = bars?.create(tasks.length, 0, { passed: 0, infra: 0 });
  const outcomes: EpisodeOutcome[] = [];
  const started = performance.now();
  try {
    const traceSink = new LocalTraceSink(join(out, 'traces'), join(out, 'actions'));
    const requests = tasks.map((task): EpisodeRequest => ({
      task,
      policy,
      environment,
      traceSink,
      options: {
        maxSteps: options.maxSteps,
        screenshots: options.screenshots,
        // The completions actor reads what the reference annotator prints, unless told otherwise.
        executor: executorOptionsFor(options.observation ?? (options.policy === 'openai' ? 'webrl' : 'default')),
      },
    }));
    await pool.runAll(requests, ({ outcome }) => {
      outcomes.push(outcome);
      const line = describeOutcome(outcome);
      if (bars) bars.log(`${line}\n`);
      else console.log(line);
      bar?.increment({
        passed: outcomes.filter((o) => !o.infraFailure && o.score >= 1).length,
        infra: outcomes.filter((o) => o.infraFailure).length,
      });
    });
  } finally {
    bars?.stop();
    await pool.close();
  }
  const summary = summarise(outcomes, performance.now() - started);
  await writeFile(join(out, 'outcomes.jsonl'), outcomes.map((o) => JSON.stringify(o)).join('\n') + '\n');
  await writeFile(join(out, 'summary.json'), `${JSON.stringify(summary, null, 2)}\n`);
  console.log(
    `${summary.episodes} episodes: ${summary.passed} passed, mean score ${summary.meanScore.toFixed(3)}, ` +
      `${summary.infraFailures} infrastructure failures; ${summary.steps} steps in ${summary.wallSeconds.toFixed(1)} s ` +
      `(${summary.stepsPerSecond.toFixed(2)} steps/s)`,
  );
  console.log(
    `reasons: ${Object.entries(summary.reasons)
      .map(([r, n]) => `${r} ${n}`)
      .join(', ')}`,
  );
  if (options.miniwob !== undefined) {
    const suite = miniwobSuiteScore(outcomes);
    await writeFile(join(out, 'suite.json'), `${JSON.stringify(suite, null, 2)}\n`);
    console.log(formatSuiteScore(suite));
    for (const line of suiteScoreBenchLines(suite)) console.log(line);
  }
  console.log(`traces: ${join(out, 'traces')}`);
  if (summary.infraFailures > 0) process.exitCode = 1;
}

export function registerRolloutCommand(program: Command, deps: RolloutCommandDeps = {}): Command {
  return program
    .command('rollout')
    .description('run tasks in the browser with a policy and write their traces')
    .option('--tasks <file>', 'task file (JSON array of {task_id, intent, start_url, oracle?})')
    .option('--split <split>', "instead of --tasks: the embedded environment's train or test tasks, on its sites")
    .option('--miniwob [types]', 'instead of --tasks: MiniWoB++ task types (comma-separated; none: the whole text subset), scored per type and over types')
    .option('--miniwob-seeds <from:to>', 'seeds of each MiniWoB++ type, to exclusive (with --miniwob)', seedRange, { from: 1000, to: 1003 })
    .option('--time-limit <seconds>', "an episode's time on a MiniWoB++ page: 'page' (its own, 10 to 30 s) or seconds (with --miniwob)", timeLimit, 'page')
    .option('--site <site>', 'only the embedded tasks on this site (with --split)')
    .option('--limit <n>', 'only the first n embedded tasks (with --split)', positiveInteger)
    .option('--world-seed <n>', 'seed of the embedded sites and their tasks (with --split)', parseSeed, DEFAULT_SEED)
    .addOption(new Option('--policy <name>', 'who acts').choices(['oracle', 'random', 'openai', 'actor']).default('oracle'))
    .option('--checkpoint <file>', 'actor .onnx file, its .json card beside it (actor policy)')
    .option('--concurrency <n>', 'episodes at once (browser contexts)', positiveInteger, availableParallelism())
    .requiredOption('--out <dir>', 'output directory (traces/, actions/, outcomes.jsonl, summary.json)')
    .option('--serve <dir>', 'serve this directory on 127.0.0.1; relative start URLs resolve against it')
    .option('--max-steps <n>', 'steps per episode', positiveInteger, 30)
    .option('--seed <n>', 'seed of the random policy and of actor sampling', finiteNumber, 0)
    .option('--model <name>', 'model name (openai policy)')
    .option('--base-url <url>', 'OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1 (openai policy)')
    .option('--temperature <t>', 'sampling temperature (openai and actor policies; 0 = greedy)', finiteNumber, 0)
    .option('--max-tokens <n>', 'completion length (openai policy)', positiveInteger, DEFAULT_MAX_TOKENS)
    .option('--stop <token...>', 'stop sequences (openai policy)', [STOP_TOKEN])
    .option('--api-key-env <var>', 'environment variable holding the API key (openai policy)', 'OPENAI_API_KEY')
    .option('--screenshots', 'store a screenshot per step beside the traces', false)
    .addOption(
      new Option('--observation <profile>', 'what the policy reads: the reference annotator (webrl; default with --policy openai) or ours').choices(
        OBSERVATION_PROFILES,
      ),
    )
    .action((options: RolloutOptions) => runRollout(options, deps));
}
