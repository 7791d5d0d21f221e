/**
 * Does a real language model get better at the web with this project? The campaign of
 * examples/smollm2-miniwob.yaml, measured as a user runs it: the main job (`webrl campaign run`) on the
 * local stack, with SmolLM2-135M-Instruct served by real vLLM (its CPU build) and trained by webrl-torch
 * (LoRA) on four MiniWoB++ task types with oracle plans:
 *
 *   zero-shot   the base model on the held-out test tasks (greedy), once: it has no campaign seed
 *   SFT         phase 0: SFT on the oracle plans' demonstrations, evaluated on the same test tasks
 *   RL          phases 1..N: curriculum tasks evolved from the failed types, kept by the served critic's
 *               filter, WebRL's actor objective; each phase evaluated on the same test tasks
 *
 * for two campaign seeds; every evaluation runs the example's whole held-out set (200 episodes: 4
 * types x 50 seeds). Every score is the MiniWoB++ page's own reward (`reward: evaluator`).
 *
 * The run is durable, as the campaigns are: its campaigns (learning-<size>-s<seed>) live on the local
 * stack (the data dir, .webrl), so stopping the bench (Ctrl-C) and running it again goes on where it
 * stopped. `--label x` starts new campaigns beside the old ones (learning-<size>-x-s<seed>).
 *
 * It runs in parts (bench/learningParts.ts): `seed-1`, `zero-shot` and `seed-2`, each kept as a file in
 * bench-results/learning/<size>[-<label>]/ (or `--results DIR`) once finished, and not run again. `--part
 * P` (repeatable) runs only those parts, so the seeds can run on two machines, or one at a time, and the
 * figures are printed by the run that finds every part's file in the folder (refused when the parts ran
 * under different settings).
 *
 *   BENCH learning.zero_shot | learning.sft | learning.final   held-out success (mean of the two seeds)
 *   BENCH learning.phase<k>                                    each RL phase, the same way
 *   BENCH learning.gain_over_sft                               last RL phase minus SFT, points
 *   BENCH learning.gain_over_sft.ci_low | .ci_high             its paired 95% interval, pooled over both seeds
 *   BENCH learning.eval_episodes                               episodes per evaluation (the fewest of any)
 *   BENCH learning.<type>.zero_shot | .sft | .final            per task type
 *   BENCH learning.seconds                                     the whole measurement, summed over the runs it took
 *
 * Each seed's campaign also prints its report (the phase table, "did each phase help?", what each RL
 * phase's actor trained on) and leaves its chart and HTML report under bench-results/learning/. Sizes
 * (docs/benchmarks.md): `cpu` (default: the example as it is) and `gpu` (more types, seeds, tasks and
 * phases; the trainer on CUDA). Run: npm run bench:learning [-- --size gpu] [-- --label x] [-- --part
 * seed-2], or WEBRL_BENCH_LEARNING_SIZE=gpu.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { completionsActorPolicy } from '../models/backends/completions';
import { BrowserRuntime } from '../activities/campaign/browserRuntime';
import { campaignEnvironment } from '../activities/campaign/environments';
import { episodeOptions } from '../activities/campaign/episodes';
import { runMainJob } from '../campaign/mainJob';
import { readEvaluations } from '../campaign/evidence';
import { readPhaseManifests } from '../campaign/manifest';
import { writeReport } from '../cli/campaign';
import { deriveSeed } from '../browser/rng';
import { backendOf } from '../env/backends/registry';
import { heldOutTasks } from '../env/tasks/heldOut';
import { toEpisodeTask } from '../env/tasks/episodeTask';
import { loadSettings, type Settings } from '../infra/settings';
import { startLocalLlm } from '../infra/vllm/localLlm';
import { ArtifactStore } from '../storage/artifactStore';
import { campaignKey } from '../storage/keys';
import { mapSettled } from '../models/remote/concurrency';
import { learningFigures, type Figure } from './learningFigures';
import { poolParts, readPart, seedPart, settingsFingerprint, writePart, ZERO_SHOT_PART, type LearningPart } from './learningParts';

const EXAMPLE = new URL('../examples/smollm2-miniwob.yaml', import.meta.url).pathname;
/** The `gpu` size: the example scaled up, as config overrides. */
const GPU_LORA_RANK = 16;
const GPU: Record<string, unknown> = {
  'campaign.environment.miniwob.taskTypes': [
    'click-button',
    'click-link',
    'click-dialog',
    'click-tab',
    'focus-text',
    'enter-text',
    'click-test-2',
    'click-option',
    'click-checkboxes',
    'enter-password',
    'login-user',
    'click-collapsible',
  ],
  // 12 types x 20 held-out seeds: 240 episodes per evaluation.
  'campaign.environment.miniwob.seeds': { train: { from: 0, to: 200 }, test: { from: 10_000, to: 10_020 } },
  'campaign.phases': 4,
  'campaign.phase.tasksPerPhase': 96,
  'campaign.phase.rolloutShardsInFlight': 8,
  'campaign.environment.demonstrationTasks': 240,
  'stack.llm.maxLoraRank': GPU_LORA_RANK,
  'models.serving.maxLoraRank': GPU_LORA_RANK,
};
const CAMPAIGN_SEEDS = [1, 2];
/** Each campaign's report (SVG chart, HTML pages) goes here, git-ignored. */
const REPORTS = 'bench-results/learning';
/** How long a Temporal or storage outage is waited for before the bench gives up (the main job waits a day by default). */
const OUTAGE_LIMIT_MS = 15 * 60_000;

const ALL_PARTS = [seedPart(CAMPAIGN_SEEDS[0]!), ZERO_SHOT_PART, ...CAMPAIGN_SEEDS.slice(1).map(seedPart)];

const { values: flags } = parseArgs({
  options: {
    size: { type: 'string', default: process.env.WEBRL_BENCH_LEARNING_SIZE ?? 'cpu' },
    label: { type: 'string', default: '' },
    part: { type: 'string', multiple: true },
    results: { type: 'string' },
  },
});
if (flags.size !== 'cpu' && flags.size !== 'gpu') throw new Error(`--size must be cpu or gpu, not ${flags.size}`);
if (!/^[a-z0-9-]*$/.test(flags.label)) throw new Error(`--label takes lower-case letters, digits and dashes, not ${flags.label}`);
const unknownParts = (flags.part ?? []).filter((part) => !ALL_PARTS.includes(part));
if (unknownParts.length) throw new Error(`--part takes ${ALL_PARTS.join(', ')}, not ${unknownParts.join(', ')}`);
const size = flags.size;
/** The parts this run does, in the bench's order. */
const chosen = ALL_PARTS.filter((part) => !flags.part || flags.part.includes(part));
const resultsDir = flags.results ?? join(REPORTS, `${size}${flags.label ? `-${flags.label}` : ''}`);
const started = performance.now();
const progress = (line: string) =>
  console.log(`[bench:learning ${new Date().toISOString().slice(11, 19)} +${((performance.now() - started) / 1000).toFixed(0)}s] ${line}`);

// Ctrl-C (or SIGTERM) stops the watch and the workers; the campaign waits in Temporal for the next run.
const interrupt = new AbortController();
process.once('SIGINT', () => interrupt.abort());
process.once('SIGTERM', () => interrupt.abort());

const campaignName = (seed: number) => `learning-${size}${flags.label ? `-${flags.label}` : ''}-s${seed}`;

/** The example under the seed's campaign name and seed (and at the gpu size, scaled up). */
async function seedSettings(seed: number): Promise<Settings> {
  const overrides: Record<string, unknown> = { 'campaign.name': campaignName(seed), 'campaign.seed': seed, ...(size === 'gpu' ? GPU : {}) };
  const settings = await loadSettings(EXAMPLE, process.env, overrides);
  const trainer = settings.config.models.trainer;
  if (size === 'gpu' && trainer.backend === 'external') {
    trainer.command = trainer.command.replace(/--lora-rank \d+ --lora-alpha \d+/, `--lora-rank ${GPU_LORA_RANK} --lora-alpha ${2 * GPU_LORA_RANK}`);
  }
  return settings;
}

/** Seconds the bench has spent on one campaign, summed over its invocations. */
interface SpentTime {
  seconds: number;
}

async function addSeconds(store: ArtifactStore, key: string, seconds: number): Promise<number> {
  const total = ((await store.tryGetJson<SpentTime>(key))?.seconds ?? 0) + seconds;
  await store.putJson(key, { seconds: total } satisfies SpentTime);
  return total;
}

/** One seed's campaign run (or attached to, or read when it has finished) by the main job; its evaluations. */
async function runSeed(seed: number): Promise<LearningPart | undefined> {
  const loaded = await seedSettings(seed);
  const name = loaded.config.campaign.name;
  progress(`${name}: the main job (${loaded.config.campaign.phases} RL phases after SFT)`);
  const began = performance.now();
  const { outcome, settings } = await runMainJob(loaded, progress, { interrupt: interrupt.signal, outageLimitMs: OUTAGE_LIMIT_MS });
  const store = new ArtifactStore(settings.config.s3, settings.secrets.s3);
  try {
    const seconds = await addSeconds(store, campaignKey(name, 'bench', 'seconds.json'), (performance.now() - began) / 1000);
    if (outcome.kind === 'interrupted') return undefined;
    if (outcome.progress.status !== 'completed') throw new Error(`${name} ended ${outcome.progress.status}`);
    const evaluations = await readEvaluations(store, await readPhaseManifests(store, name));
    // The campaign's report, as `webrl campaign report` writes it: the table, did each phase help, what the actor trained on.
    await mkdir(REPORTS, { recursive: true });
    progress(`${name}:\n${await writeReport(settings, name, { svg: join(REPORTS, `${name}.svg`), html: join(REPORTS, name) })}`);
    const phases = evaluations.map((e) => e.tasks.map(({ taskId, score }) => ({ taskId, score })));
    return { part: seedPart(seed), settings: fingerprint, commit, seconds, phases };
  } finally {
    store.destroy();
  }
}

/**
 * The base model (no adapter) on the first seed's held-out tasks (the same tasks as every seed's, unless
 * the example samples them), greedy, as the campaign's evaluation runs them.
 */
async function runZeroShot(): Promise<LearningPart | undefined> {
  const { config } = await seedSettings(CAMPAIGN_SEEDS[0]!);
  const actor = config.models.actor;
  if (actor.backend !== 'completions') throw new Error('the zero-shot run needs a completions actor');
  const began = performance.now();
  const { backend, settings } = backendOf(config);
  const tasks = heldOutTasks(await backend.tasks.load(settings, 'test'), settings.testTasks, config.campaign.seed);
  progress(`zero-shot: the base model on the ${tasks.length} held-out tasks`);
  const llm = await startLocalLlm(config, progress);
  let runtime: BrowserRuntime | undefined;
  try {
    runtime = await BrowserRuntime.start(config);
    const { pool } = runtime;
    const { environment, siteUrls } = await campaignEnvironment(runtime, config, tasks);
    let done = 0;
    const results = await mapSettled(tasks, config.concurrency.browserContexts, async (task) => {
      if (interrupt.signal.aborted) throw new Error('interrupted');
      const { outcome } = await pool.runEpisode({
        task: toEpisodeTask(task, siteUrls),
        policy: completionsActorPolicy(actor, 0),
        environment,
        options: episodeOptions(config),
      });
      if (++done % 10 === 0 || done === tasks.length) progress(`zero-shot: ${done}/${tasks.length} episodes`);
      return { taskId: String(task.task_id), score: outcome.score };
    });
    if (interrupt.signal.aborted) return undefined;
    const zeroShot = results.map((r, i) => (r.ok ? r.value : { taskId: String(tasks[i]!.task_id), score: 0 }));
    return { part: ZERO_SHOT_PART, settings: fingerprint, commit, seconds: (performance.now() - began) / 1000, zeroShot };
  } finally {
    await runtime?.close();
    await llm?.stop();
  }
}

/** The commit this run measures, `-dirty` with uncommitted changes to tracked files. */
function currentCommit(): string {
  try {
    const git = (...args: string[]) => execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    return `${git('rev-parse', '--short=12', 'HEAD')}${git('status', '--porcelain', '--untracked-files=no') ? '-dirty' : ''}`;
  } catch {
    return 'unknown';
  }
}

const exampleBytes = await readFile(EXAMPLE);
const fingerprint = settingsFingerprint(exampleBytes, size, size === 'gpu' ? { ...GPU, loraRank: GPU_LORA_RANK } : {});
const commit = currentCommit();
const example = await loadSettings(EXAMPLE, process.env);
const environment = example.config.campaign.environment;
const types =
  environment.backend === 'miniwob' ? ((size === 'gpu' ? GPU['campaign.environment.miniwob.taskTypes'] : environment.miniwob.taskTypes) as string[]) : [];
progress(
  `size ${size}: ${EXAMPLE}${size === 'gpu' ? ' scaled up' : ''}; ${types.join(', ')}; parts ${chosen.join(', ')} ` +
    `(campaigns ${CAMPAIGN_SEEDS.map(campaignName).join(', ')}); results in ${resultsDir}`,
);
for (const part of chosen) {
  const done = await readPart(resultsDir, part);
  if (done) {
    progress(`${part}: finished before (${done.commit}), kept`);
    continue;
  }
  const seed = CAMPAIGN_SEEDS.find((s) => seedPart(s) === part);
  const result = seed === undefined ? await runZeroShot() : await runSeed(seed);
  if (!result) {
    progress(
      `stopped in ${part}${seed === undefined ? ' (it starts over)' : `: ${campaignName(seed)} waits in Temporal`}; run the bench again to go on from where it stopped`,
    );
    process.exit(130);
  }
  progress(`${part}: finished, ${await writePart(resultsDir, result)}`);
}
progress(`this run: ${((performance.now() - started) / 1000).toFixed(0)} s; the local stack stays up (node bin/webrl.js stack down stops it)`);
const parts = (await Promise.all(ALL_PARTS.map((part) => readPart(resultsDir, part)))).filter((p) => p !== undefined);
const missing = ALL_PARTS.filter((part) => !parts.some((p) => p.part === part));
if (missing.length) {
  progress(
    `the figures need every part; missing: ${missing.join(', ')} (npm run bench:learning -- ${[`--size ${size}`, ...(flags.label ? [`--label ${flags.label}`] : []), ...(flags.results ? [`--results ${flags.results}`] : []), ...missing.map((m) => `--part ${m}`)].join(' ')}, or their files copied into ${resultsDir})`,
  );
  process.exit(0);
}
const commits = [...new Set(parts.map((p) => p.commit))];
progress(
  `pooled: ${parts.map((p) => `${p.part} at ${p.commit}`).join(', ')}${commits.length > 1 ? ' (different commits: the same settings, check that nothing the run measures changed between them)' : ''}`,
);
const seconds = parts.reduce((sum, p) => sum + p.seconds, 0);
const figures: Figure[] = [
  ...learningFigures(poolParts(parts, CAMPAIGN_SEEDS), types, deriveSeed('bench:learning', ...CAMPAIGN_SEEDS)),
  ['learning.seconds', seconds, 's'],
];
for (const [name, value, unit] of figures) console.log(`BENCH ${name} ${value.toFixed(3)} ${unit}`);
