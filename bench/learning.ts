/**
 * Does a real language model get better at the web with this project? SmolLM2-135M-Instruct served by
 * real vLLM (its CPU build, infra/vllm) and trained by webrl-torch (LoRA) on MiniWoB++ task types with
 * oracle plans, on the real stack (Temporal, MinIO, Chromium, the three workers in this process):
 *
 *   zero-shot   the base model on the held-out test seeds (greedy), once: it has no campaign seed
 *   SFT         phase 0: SFT on the oracle plans' demonstrations, evaluated on the same test seeds
 *   RL          phases 1..N: curriculum tasks evolved from the failed types, WebRL's actor objective,
 *               each phase evaluated on the same test seeds
 *
 * for two campaign seeds. Every score is the MiniWoB++ page's own reward (`reward: evaluator`). The
 * critic filter is off (band [0, 1], a constant HTTP critic answers it): on CPU there is no time to
 * serve each phase's trained critic; the trained critic still gives actor-webrl its advantages. The ORM
 * rewards nothing here (every task has its page reward).
 *
 *   BENCH learning.zero_shot | learning.sft | learning.final   held-out success (mean of the two seeds)
 *   BENCH learning.phase<k>                                    each RL phase, the same way
 *   BENCH learning.<type>.zero_shot | .sft | .final            per task type
 *   BENCH learning.seconds                                     the whole run
 *
 * Sizes (docs/benchmarks.md): `cpu` (default, about 2 hours or less on 2 loaded cores) and `gpu`
 * (trainer on CUDA, more types, seeds and phases). Run: npm run bench:learning [-- --size gpu],
 * or WEBRL_BENCH_LEARNING_SIZE=gpu.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import type { Client } from '@temporalio/client';
import { remoteActorPolicy } from '../activities/campaign/backends';
import { BrowserRuntime } from '../activities/campaign/browserRuntime';
import { campaignEnvironment } from '../activities/campaign/environments';
import { episodeOptions } from '../activities/campaign/episodes';
import { campaignHandle } from '../campaign/control';
import { progressQuery } from '../workflows/campaign';
import type { Config } from '../config/schema';
import type { EnvironmentTask } from '../env/backends/contract';
import { parseMiniwobTaskId } from '../env/backends/miniwob/episode';
import { toEpisodeTask } from '../env/tasks/episodeTask';
import type { ArtifactStore } from '../storage/artifactStore';
import { phaseKey } from '../storage/keys';
import { mapSettled } from '../models/remote/concurrency';
import { tinyCampaignConfig } from '../test/harness/campaign';
import { runLlmCampaign } from '../test/harness/llmCampaign';
import { startTestStack, type TestStack } from '../test/harness/stack';
import { startRecordedVllm, type RecordedVllm } from '../test/harness/vllm';
import { ensureSmolLM2, ensureTrainerEnvironment } from '../trainers/torch/environment';

/** What one size runs; `cpu` fits about 2 hours on 2 loaded cores, `gpu` is the same run larger. */
interface Size {
  taskTypes: string[];
  trainSeeds: number;
  testSeeds: number;
  rlPhases: number;
  tasksPerPhase: number;
  demonstrations: number;
  sftEpochs: number;
  loraRank: number;
  device: string;
  episodesInFlight: number;
}
const EASY_TYPES = ['click-button', 'click-link', 'click-dialog', 'click-tab', 'focus-text', 'enter-text'];
const SIZES: Record<'cpu' | 'gpu', Size> = {
  cpu: { taskTypes: EASY_TYPES, trainSeeds: 30, testSeeds: 5, rlPhases: 2, tasksPerPhase: 24, demonstrations: 60, sftEpochs: 3, loraRank: 8, device: 'cpu', episodesInFlight: 2 },
  gpu: {
    taskTypes: [...EASY_TYPES, 'click-test-2', 'click-option', 'click-checkboxes', 'enter-password', 'login-user', 'click-collapsible'],
    trainSeeds: 200,
    testSeeds: 10,
    rlPhases: 4,
    tasksPerPhase: 96,
    demonstrations: 240,
    sftEpochs: 3,
    loraRank: 16,
    device: 'auto',
    episodesInFlight: 8,
  },
};
const CAMPAIGN_SEEDS = [1, 2];
const TEST_FROM = 10_000;
/** Enough for one action (`do(action="Type", argument="...", element="12")`) and a short thought. */
const MAX_TOKENS = 64;

const { values: flags } = parseArgs({ options: { size: { type: 'string', default: process.env.WEBRL_BENCH_LEARNING_SIZE ?? 'cpu' } } });
if (flags.size !== 'cpu' && flags.size !== 'gpu') throw new Error(`--size must be cpu or gpu, not ${flags.size}`);
const size = SIZES[flags.size];
const started = performance.now();
const progress = (line: string) => console.log(`[bench:learning ${new Date().toISOString().slice(11, 19)} +${((performance.now() - started) / 1000).toFixed(0)}s] ${line}`);

const typeOf = (taskId: string) => parseMiniwobTaskId(taskId)?.type ?? taskId;
const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);

/** Success per task type of a list of scored tasks, and over all of them. */
function successByType(scores: { taskId: string; score: number }[]): { all: number; byType: Map<string, number> } {
  const byType = new Map<string, number[]>();
  for (const { taskId, score } of scores) byType.set(typeOf(taskId), [...(byType.get(typeOf(taskId)) ?? []), score]);
  return { all: mean(scores.map((s) => s.score)), byType: new Map([...byType].map(([type, xs]) => [type, mean(xs)])) };
}

/** Prints one line each time the campaign moves to another phase or activity, until it ends. */
async function followProgress(client: Client, name: string): Promise<void> {
  let last = '';
  for (;;) {
    const handle = campaignHandle(client, name);
    const state = await handle.query(progressQuery).catch(() => undefined);
    if (state) {
      const line = `${name}: phase ${state.phase}/${state.phases} ${state.status}${state.activity ? ` · ${state.activity}` : ''} ${JSON.stringify(state.counts)}`;
      if (line !== last) progress(line);
      last = line;
    }
    const { status } = await handle.describe();
    if (status.name !== 'RUNNING') return;
    await delay(5000);
  }
}

/** The base model (no adapter) on the campaign's test tasks, greedy, as the campaign's evaluation runs them. */
async function zeroShot(config: Config, store: ArtifactStore, name: string): Promise<{ taskId: string; score: number }[]> {
  const tasks: EnvironmentTask[] = [];
  for await (const row of store.readJsonl<EnvironmentTask>(phaseKey(name, 0, 'tasks', 'test.jsonl'))) tasks.push(row);
  const runtime = await BrowserRuntime.start(config);
  try {
    const { environment, siteUrls } = await campaignEnvironment(runtime, config, tasks);
    let done = 0;
    const results = await mapSettled(tasks, size.episodesInFlight, async (task) => {
      const { outcome } = await runtime.pool.runEpisode({ task: toEpisodeTask(task, siteUrls), policy: remoteActorPolicy(config.models, 0)!, environment, options: episodeOptions(config) });
      if (++done % 10 === 0 || done === tasks.length) progress(`zero-shot: ${done}/${tasks.length} episodes`);
      return { taskId: String(task.task_id), score: outcome.score };
    });
    return results.map((r, i) => (r.ok ? r.value : { taskId: String(tasks[i]!.task_id), score: 0 }));
  } finally {
    await runtime.close();
  }
}

interface SeedRun {
  /** Per evaluation (phase 0 = SFT, then each RL phase): the test tasks' scores. */
  phases: { taskId: string; score: number }[][];
  zeroShot?: { taskId: string; score: number }[];
}

async function runSeed(stack: TestStack, vllm: RecordedVllm, python: string, model: string, seed: number, withZeroShot: boolean): Promise<SeedRun> {
  const name = `learning-s${seed}`;
  const client = await stack.client();
  const base = await tinyCampaignConfig(stack, name, { phases: size.rlPhases, seed });
  const like = { ...base, campaign: { ...base.campaign, reward: 'evaluator' as const } };
  const trainer =
    `${join(dirname(python), 'webrl-torch')} train --base-model ${model} --data {data} --init {init} --reference {reference} --critic {critic} --out {out}` +
    ` --lora-rank ${size.loraRank} --lora-alpha ${2 * size.loraRank} --max-length 2048 --no-gradient-checkpointing --device ${size.device}`;
  progress(`${name}: campaign of ${size.rlPhases} RL phases after SFT on ${size.taskTypes.length} task types`);
  const run = await runLlmCampaign(stack, client, name, 'vllm-lora', {
    like,
    phases: size.rlPhases,
    // The server outlives each campaign (it serves both seeds and the zero-shot run).
    actor: { server: { ...vllm, close: async () => {} }, maxTokens: MAX_TOKENS, timeoutMs: 300_000 },
    trainer: { command: trainer, timeoutSeconds: 3 * 3600 },
    campaign: {
      phase: { tasksPerPhase: size.tasksPerPhase, rolloutShardSize: 8, rolloutShardsInFlight: size.episodesInFlight, candidateFactor: 2, criticBand: [0, 1], curriculum: true, temperature: 1 },
      environment: {
        backend: 'miniwob',
        miniwob: { taskTypes: size.taskTypes, seeds: { train: { from: 0, to: size.trainSeeds }, test: { from: TEST_FROM, to: TEST_FROM + size.testSeeds } }, timeLimit: 120 },
        testTasks: 0,
        demonstrationTasks: size.demonstrations,
        maxSteps: 6,
        episodeDeadlineSeconds: 600,
        screenshotRate: 0,
      },
      training: {
        sftEpochs: size.sftEpochs,
        ormEpochs: 1,
        criticEpochs: 1,
        actorEpochs: 1,
        batchSize: 8,
        learningRates: { 'actor-sft': 2e-4, 'actor-webrl': 2e-5, critic: 1e-4, orm: 1e-4 },
      },
    },
    whileRunning: () => followProgress(client, name),
  });
  try {
    if (run.final.status !== 'completed') throw new Error(`${name} ended ${run.final.status}: ${JSON.stringify(run.final.failure)}`);
    const phases = [];
    for (const manifest of run.manifests) {
      const evaluation = await run.store.getJson<{ tasks: { taskId: string; score: number }[] }>(manifest.data.artifacts.evaluation);
      phases.push(evaluation.tasks);
      progress(`${name}: phase ${manifest.data.phase} held-out success ${successByType(evaluation.tasks).all.toFixed(3)}`);
    }
    const result: SeedRun = { phases };
    if (withZeroShot) {
      progress('zero-shot: the base model on the same test tasks');
      result.zeroShot = await zeroShot(run.config, run.store, name);
    }
    return result;
  } finally {
    await run.close();
  }
}

const scratch = await mkdtemp(join(tmpdir(), 'webrl-bench-learning-'));
const figures: [string, number, string][] = [];
try {
  const python = ensureTrainerEnvironment();
  const model = ensureSmolLM2();
  progress(`size ${flags.size}: ${size.taskTypes.join(', ')}; ${size.testSeeds} test seeds per type; campaign seeds ${CAMPAIGN_SEEDS.join(', ')}`);
  progress('starting vLLM with SmolLM2-135M-Instruct');
  const vllm = await startRecordedVllm({ model, servedModelName: 'smollm2', maxLoraRank: size.loraRank, maxModelLen: 8192, logFile: join(scratch, 'vllm.log') });
  const stack = await startTestStack();
  const runs: SeedRun[] = [];
  try {
    for (const [i, seed] of CAMPAIGN_SEEDS.entries()) runs.push(await runSeed(stack, vllm, python, model, seed, i === 0));
  } finally {
    await vllm.close();
    await stack.stop();
  }
  const zero = successByType(runs[0]!.zeroShot!);
  const phaseCount = Math.min(...runs.map((r) => r.phases.length));
  const perPhase = Array.from({ length: phaseCount }, (_, k) => runs.map((r) => successByType(r.phases[k]!)));
  const overSeeds = (k: number, type?: string) => mean(perPhase[k]!.map((s) => (type ? (s.byType.get(type) ?? 0) : s.all)));
  figures.push(['learning.zero_shot', zero.all, 'success']);
  figures.push(['learning.sft', overSeeds(0), 'success']);
  for (let k = 1; k < phaseCount; k++) figures.push([`learning.phase${k}`, overSeeds(k), 'success']);
  figures.push(['learning.final', overSeeds(phaseCount - 1), 'success']);
  for (const type of size.taskTypes) {
    figures.push([`learning.${type}.zero_shot`, zero.byType.get(type) ?? 0, 'success']);
    figures.push([`learning.${type}.sft`, overSeeds(0, type), 'success']);
    figures.push([`learning.${type}.final`, overSeeds(phaseCount - 1, type), 'success']);
  }
} finally {
  await rm(scratch, { recursive: true, force: true });
}
figures.push(['learning.seconds', (performance.now() - started) / 1000, 's']);
for (const [name, value, unit] of figures) console.log(`BENCH ${name} ${value.toFixed(3)} ${unit}`);
