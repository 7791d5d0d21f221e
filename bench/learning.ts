/**
 * Does a real language model get better at the web with this project? The campaign of
 * examples/smollm2-miniwob.yaml, measured: SmolLM2-135M-Instruct served by real vLLM (its CPU build,
 * infra/vllm) and trained by webrl-torch (LoRA) on four MiniWoB++ task types with oracle plans, on the
 * real stack (Temporal, MinIO, Chromium, the three workers in this process):
 *
 *   zero-shot   the base model on the held-out test tasks (greedy), once: it has no campaign seed
 *   SFT         phase 0: SFT on the oracle plans' demonstrations, evaluated on the same test tasks
 *   RL          phases 1..N: curriculum tasks evolved from the failed types, WebRL's actor objective,
 *               each phase evaluated on the same test tasks
 *
 * for two campaign seeds; every evaluation runs the example's whole held-out set (200 episodes: 4
 * types x 50 seeds). Every score is the MiniWoB++ page's own reward (`reward: evaluator`); the ORM
 * (the base model on the same server) only judges; the critic each phase trains (served by
 * `webrl-torch serve-critic`, as the main job serves it) filters the next phase's candidates and gives
 * actor-webrl its advantages. Only the example's ports, names and the trainer's paths are this machine's.
 *
 *   BENCH learning.zero_shot | learning.sft | learning.final   held-out success (mean of the two seeds)
 *   BENCH learning.phase<k>                                    each RL phase, the same way
 *   BENCH learning.gain_over_sft                               last RL phase minus SFT, points
 *   BENCH learning.gain_over_sft.ci_low | .ci_high             its paired 95% interval, pooled over both seeds
 *   BENCH learning.eval_episodes                               episodes per evaluation (the fewest of any)
 *   BENCH learning.<type>.zero_shot | .sft | .final            per task type
 *   BENCH learning.seconds                                     the whole run
 *
 * Each seed's campaign also prints its report's "did each phase help?" table. Sizes
 * (docs/benchmarks.md): `cpu` (default: the example as it is, about 2 hours on 2 cores) and `gpu`
 * (more types, seeds, tasks and phases; the trainer on CUDA). Run:
 * npm run bench:learning [-- --size gpu], or WEBRL_BENCH_LEARNING_SIZE=gpu.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import type { Client } from '@temporalio/client';
import type { EvaluationResult } from '../activities/campaign/controlActivities';
import { completionsActorPolicy } from '../models/backends/completions';
import { BrowserRuntime } from '../activities/campaign/browserRuntime';
import { campaignEnvironment } from '../activities/campaign/environments';
import { episodeOptions } from '../activities/campaign/episodes';
import { campaignHandle } from '../campaign/control';
import { phaseEvidence } from '../campaign/evidence';
import { renderEvidenceText } from '../campaign/report';
import { deriveSeed } from '../browser/rng';
import { progressQuery } from '../workflows/campaign';
import { loadConfig, parseConfig } from '../config/load';
import type { Config, ConfigInput } from '../config/campaignConfig';
import type { EnvironmentTask } from '../env/backends/contract';
import { startCriticServer, type RunningCriticServer } from '../infra/criticServer';
import { toEpisodeTask } from '../env/tasks/episodeTask';
import type { ArtifactStore } from '../storage/artifactStore';
import { phaseKey } from '../storage/keys';
import { mapSettled } from '../models/remote/concurrency';
import { tinyCampaignConfig } from '../test/harness/campaign';
import { runLlmCampaign } from '../test/harness/llmCampaign';
import { startTestStack, type TestStack } from '../test/harness/stack';
import { startRecordedVllm, type RecordedVllm } from '../test/harness/vllm';
import { ensureSmolLM2, ensureTrainerEnvironment } from '../trainers/torch/environment';
import { learningFigures, type Figure, type ScoredTask, type SeedRun } from './learningFigures';

/**
 * The campaign measured is examples/smollm2-miniwob.yaml (the `cpu` size, as a user runs it), on this
 * process's stack and vLLM, for each campaign seed; `gpu` scales it up and trains on CUDA.
 */
const EXAMPLE = new URL('../examples/smollm2-miniwob.yaml', import.meta.url).pathname;
const GPU = {
  taskTypes: [
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
  seeds: { train: { from: 0, to: 200 }, test: { from: 10_000, to: 10_020 } },
  phases: 4,
  tasksPerPhase: 96,
  demonstrationTasks: 240,
  browserContexts: 8,
  loraRank: 16,
};
const CAMPAIGN_SEEDS = [1, 2];

const { values: flags } = parseArgs({ options: { size: { type: 'string', default: process.env.WEBRL_BENCH_LEARNING_SIZE ?? 'cpu' } } });
if (flags.size !== 'cpu' && flags.size !== 'gpu') throw new Error(`--size must be cpu or gpu, not ${flags.size}`);
const example = await loadConfig(EXAMPLE, {});
const size = flags.size;
const started = performance.now();
const progress = (line: string) =>
  console.log(`[bench:learning ${new Date().toISOString().slice(11, 19)} +${((performance.now() - started) / 1000).toFixed(0)}s] ${line}`);

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
async function zeroShot(config: Config, store: ArtifactStore, name: string): Promise<ScoredTask[]> {
  const tasks: EnvironmentTask[] = [];
  for await (const row of store.readJsonl<EnvironmentTask>(phaseKey(name, 0, 'tasks', 'test.jsonl'))) tasks.push(row);
  const actor = config.models.actor;
  if (actor.backend !== 'completions') throw new Error('the zero-shot run needs a completions actor');
  const runtime = await BrowserRuntime.start(config);
  try {
    const { environment, siteUrls } = await campaignEnvironment(runtime, config, tasks);
    let done = 0;
    const results = await mapSettled(tasks, config.concurrency.browserContexts, async (task) => {
      const { outcome } = await runtime.pool.runEpisode({
        task: toEpisodeTask(task, siteUrls),
        policy: completionsActorPolicy(actor, 0),
        environment,
        options: episodeOptions(config),
      });
      if (++done % 10 === 0 || done === tasks.length) progress(`zero-shot: ${done}/${tasks.length} episodes`);
      return { taskId: String(task.task_id), score: outcome.score };
    });
    return results.map((r, i) => (r.ok ? r.value : { taskId: String(tasks[i]!.task_id), score: 0 }));
  } finally {
    await runtime.close();
  }
}

/** The example's trainer command with this machine's paths for the trainer's environment and the model. */
function trainerCommand(python: string, model: string): string {
  if (example.models.trainer.backend !== 'external') throw new Error(`${EXAMPLE}: models.trainer is not external`);
  const paths: [string, string][] = [
    ['.webrl/python/venv/bin/webrl-torch', join(dirname(python), 'webrl-torch')],
    ['.webrl/models/SmolLM2-135M-Instruct', model],
  ];
  let command = example.models.trainer.command;
  for (const [from, to] of paths) {
    if (!command.includes(from)) throw new Error(`${EXAMPLE}: the trainer command names no ${from}`);
    command = command.replace(from, to);
  }
  return size === 'gpu' ? command.replace(/--lora-rank \d+ --lora-alpha \d+/, `--lora-rank ${GPU.loraRank} --lora-alpha ${2 * GPU.loraRank}`) : command;
}

/** The example's campaign section under another name and seed (and at the gpu size, larger). */
function campaignOf(name: string, seed: number): Config['campaign'] {
  const campaign = { ...example.campaign, name, seed };
  if (size === 'cpu') return campaign;
  if (campaign.environment.backend !== 'miniwob') throw new Error(`${EXAMPLE}: not a miniwob campaign`);
  return {
    ...campaign,
    phases: GPU.phases,
    phase: { ...campaign.phase, tasksPerPhase: GPU.tasksPerPhase, rolloutShardsInFlight: GPU.browserContexts },
    environment: {
      ...campaign.environment,
      demonstrationTasks: GPU.demonstrationTasks,
      miniwob: { ...campaign.environment.miniwob, taskTypes: GPU.taskTypes, seeds: GPU.seeds },
    },
  };
}

/** The example's critic, on this process's critic server when the example serves its critics. */
function criticOf(server: RunningCriticServer | undefined, checkpoints: string): ConfigInput['models'] {
  const critic = example.models.critic;
  return { critic: server && critic.backend === 'served' ? { ...critic, baseUrl: server.baseUrl, sharedDir: checkpoints } : critic };
}

async function runSeed(
  stack: TestStack,
  vllm: RecordedVllm,
  critic: RunningCriticServer | undefined,
  python: string,
  model: string,
  seed: number,
  withZeroShot: boolean,
): Promise<SeedRun> {
  const name = `learning-s${seed}`;
  const client = await stack.client();
  const campaign = campaignOf(name, seed);
  const local = await tinyCampaignConfig(stack, name, { phases: campaign.phases, seed });
  const like = parseConfig({
    ...local,
    campaign,
    concurrency: { ...local.concurrency, browserContexts: size === 'gpu' ? GPU.browserContexts : example.concurrency.browserContexts },
  });
  const actor = example.models.actor.backend === 'completions' ? example.models.actor : undefined;
  progress(`${name}: ${campaign.phases} RL phases after SFT`);
  const run = await runLlmCampaign(stack, client, name, 'vllm-lora', {
    like,
    phases: campaign.phases,
    // The server outlives each campaign (it serves both seeds and the zero-shot run).
    actor: {
      server: { ...vllm, close: async () => {} },
      ...(actor
        ? { maxTokens: actor.maxTokens, timeoutMs: actor.timeoutMs, promptFormat: actor.promptFormat, ...(actor.tokenizer ? { tokenizer: model } : {}) }
        : {}),
    },
    trainer: { command: trainerCommand(python, model), timeoutSeconds: 3 * 3600 },
    // The example's ORM (the served base model, on the same server) and critic.
    models: {
      orm: { ...example.models.orm, ...(example.models.orm.backend === 'chat' ? { baseUrl: vllm.baseUrl } : {}) },
      ...criticOf(critic, join(scratch, 'critics')),
    },
    whileRunning: () => followProgress(client, name),
  });
  try {
    if (run.final.status !== 'completed') throw new Error(`${name} ended ${run.final.status}: ${JSON.stringify(run.final.failure)}`);
    const evaluations = [];
    for (const manifest of run.manifests) {
      const { tasks } = await run.store.getJson<EvaluationResult>(manifest.data.artifacts.evaluation);
      evaluations.push({ phase: manifest.data.phase, tasks });
    }
    progress(`${name}:\n${renderEvidenceText(phaseEvidence(name, evaluations))}`);
    const result: SeedRun = { phases: evaluations.map((e) => e.tasks) };
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
const figures: Figure[] = [];
try {
  const python = ensureTrainerEnvironment();
  const model = ensureSmolLM2();
  const { environment } = campaignOf('x', 0);
  const types = environment.backend === 'miniwob' ? environment.miniwob.taskTypes : [];
  progress(`size ${size}: ${EXAMPLE}${size === 'gpu' ? ' scaled up' : ''}; ${types.join(', ')}; campaign seeds ${CAMPAIGN_SEEDS.join(', ')}`);
  progress('starting vLLM with SmolLM2-135M-Instruct');
  const vllm = await startRecordedVllm({
    model,
    servedModelName: 'smollm2',
    maxLoraRank: size === 'gpu' ? GPU.loraRank : example.stack.llm!.maxLoraRank,
    maxModelLen: 8192,
    logFile: join(scratch, 'vllm.log'),
    readyTimeoutMs: 20 * 60_000,
  }); // 2 cores shared with other work: minutes to start
  // The campaign's critics, served as the main job serves them (stack.llm.criticPort), on a free port.
  const critic =
    example.models.critic.backend === 'served'
      ? await startCriticServer({ python, baseModel: model, checkpoints: join(scratch, 'critics'), logFile: join(scratch, 'critic.log') })
      : undefined;
  const stack = await startTestStack();
  const runs: SeedRun[] = [];
  try {
    for (const [i, seed] of CAMPAIGN_SEEDS.entries()) runs.push(await runSeed(stack, vllm, critic, python, model, seed, i === 0));
  } finally {
    await vllm.close();
    await critic?.stop();
    await stack.stop();
  }
  figures.push(...learningFigures(runs, types, deriveSeed('bench:learning', ...CAMPAIGN_SEEDS)));
} finally {
  await rm(scratch, { recursive: true, force: true });
}
figures.push(['learning.seconds', (performance.now() - started) / 1000, 's']);
for (const [name, value, unit] of figures) console.log(`BENCH ${name} ${value.toFixed(3)} ${unit}`);
