/**
 * Activities of the control task queue: cheap bookkeeping next to the workflow. Task sets for each
 * phase (the self-evolving curriculum, or the train split for the ablation), the held-out test set,
 * the evaluation summary, and the phase manifest, written last.
 */
import { ApplicationFailure } from '@temporalio/activity';
import { Rng } from '../../env/random';
import type { EnvironmentTask, EvolveRequest } from '../../env/backends/contract';
import { backendOf } from '../../env/backends/registry';
import { heldOutTasks } from '../../env/tasks/heldOut';
import { trainerMetricsKey, type TrainerMetrics } from '../../models/train/trainerMetrics';
import { manifestKey, phaseKey, phaseManifestKey } from '../../storage/keys';
import type { PhaseManifestData } from './phaseManifest';
import type { PhaseSummary } from '../../workflows/campaignTypes';
import type { ControlActivities } from './contract';
import type { CampaignContext } from './context';
import type { TrajectoryIndexRow } from './episodes';
import type { RewardRow } from './trainActivities';
import { servedRecordKey } from '../../models/backends/serving';
import type { ServedModelRecord } from '../../models/backends/roles';
import type { RolesFor } from './backends';
import { miniwobSuiteScore, type SuiteScore } from '../../env/backends/miniwob/suiteScore';
import { taskTemplate } from './mostPromisingTasks';

/** Ids of generated tasks: clear of the splits' ids (test from 0, train from 10,000). */
const GENERATED_ID_BASE = 1_000_000;
const GENERATED_IDS_PER_PHASE = 100_000;

export interface EvaluationResult {
  successRate: number;
  perSite: Record<string, number>;
  tasks: Array<{ taskId: string; site: string; score: number; steps: number; answer: string | null }>;
  /** MiniWoB++ test tasks' success per task type and the mean over types, as papers report them (docs/miniwob.md). */
  miniwob?: SuiteScore;
}

/** What the control activities work with: the campaign's storage and context, and its resolved model roles. */
interface ControlDeps {
  ctx: CampaignContext;
  roles: RolesFor;
}

type InputOf<A extends keyof ControlActivities> = Parameters<ControlActivities[A]>[0];
type Config = Awaited<ReturnType<CampaignContext['config']>>;
/** A backend's own evolution of failed tasks, its settings bound. */
type Evolve = (request: EvolveRequest) => EnvironmentTask[];

/**
 * The tasks the actor solved in the rollouts the failed tasks come from (the phase before's, read from
 * its manifest: its tasks and their rewards), for an evolution that weighs what the actor half-knows.
 */
async function solvedBefore(ctx: CampaignContext, campaignId: string, phase: number): Promise<EnvironmentTask[] | undefined> {
  const published = await ctx.store.readManifest<PhaseManifestData>(phaseManifestKey(campaignId, phase - 1));
  if (!published) return undefined;
  const solved = new Set((await ctx.readDataset<RewardRow>(published.data.artifacts.rewards)).filter((r) => r.reward === 1).map((r) => r.taskId));
  return (await ctx.readDataset<EnvironmentTask>(published.data.artifacts.tasks)).filter((task) => solved.has(String(task.task_id)));
}

/** Everything asked before must not be asked again: both splits' intents and every earlier phase's tasks (those asked before, apart). */
async function intentsAskedBefore(ctx: CampaignContext, input: InputOf<'generateTasks'>, config: Config, train: EnvironmentTask[]) {
  const known = new Set([...train, ...(await ctx.tasks(config, 'test'))].map((t) => t.intent));
  const askedBefore = new Set<string>();
  for (let phase = 1; phase < input.phase; phase++) {
    // A phase taken over from another campaign (a fork) has its tasks under that campaign.
    const published = await ctx.store.readManifest<PhaseManifestData>(phaseManifestKey(input.campaignId, phase));
    const owner = published?.data.forkedFrom?.campaign ?? input.campaignId;
    const earlier = await ctx.store.readManifest<{ key: string }>(manifestKey(phaseKey(owner, phase, 'tasks', 'candidates')));
    if (!earlier) continue;
    for await (const task of ctx.store.readJsonl<EnvironmentTask>(earlier.data.key)) {
      known.add(task.intent);
      askedBefore.add(task.intent);
    }
  }
  return { known, askedBefore };
}

/** New tasks from the chat task generator, topped up by the embedded evolution where it may; the generation's numbers are kept. */
async function generatedByChat(
  ctx: CampaignContext,
  input: InputOf<'generateTasks'>,
  generator: NonNullable<ReturnType<RolesFor>['taskGenerator']>,
  evolve: Evolve | undefined,
  from: { failed: EnvironmentTask[]; solved: EnvironmentTask[] | undefined; known: Set<string>; firstTaskId: number },
): Promise<EnvironmentTask[]> {
  const { failed, solved, known, firstTaskId } = from;
  const generated = await generator.generate({
    failed,
    known,
    count: input.count,
    firstTaskId,
    seed: input.seed + input.phase,
    label: `${input.campaignId}-p${input.phase}`,
  });
  let tasks = generated.tasks;
  let filled = 0;
  if (generator.fillWithEmbedded && evolve && tasks.length < input.count) {
    for (const task of tasks) known.add(task.intent);
    const more = evolve({
      failed,
      ...(solved ? { solved } : {}),
      knownIntents: known,
      count: input.count - tasks.length,
      seed: input.seed + input.phase,
      firstTaskId: firstTaskId + tasks.length,
    });
    filled = more.length;
    tasks = [...tasks, ...more];
  }
  await ctx.store.putJson(ctx.key(input, 'tasks', 'generation.json'), {
    model: generator.model,
    asked: input.count,
    generated: generated.tasks.length,
    filledByEmbedded: filled,
    duplicates: generated.duplicates,
    failures: generated.failures,
  });
  return tasks;
}

/**
 * The self-evolving curriculum's tasks, from the failed ones. A backend with its own evolution (the
 * embedded world) evolves failed tasks; on the others (WebArena's sites), new tasks come from the chat
 * generator only, top-ups from the train file.
 */
async function curriculumTasks(
  { ctx, roles }: ControlDeps,
  input: InputOf<'generateTasks'>,
  config: Config,
  train: EnvironmentTask[],
  evolve: Evolve | undefined,
  failedTasks: NonNullable<InputOf<'generateTasks'>['failedTasks']>,
): Promise<EnvironmentTask[]> {
  const { known, askedBefore } = await intentsAskedBefore(ctx, input, config, train);
  const failed = await ctx.readDataset<EnvironmentTask>(failedTasks);
  const solved = await solvedBefore(ctx, input.campaignId, input.phase);
  const firstTaskId = GENERATED_ID_BASE + input.phase * GENERATED_IDS_PER_PHASE;
  const generator = roles(config).taskGenerator;
  let tasks: EnvironmentTask[];
  if (generator) {
    tasks = await generatedByChat(ctx, input, generator, evolve, { failed, solved, known, firstTaskId });
  } else {
    if (!evolve) {
      throw ApplicationFailure.nonRetryable(
        'the curriculum on WebArena sites needs models.taskGenerator.backend: chat (embedded evolution writes tasks for the embedded sites only)',
        'ConfigError',
      );
    }
    tasks = evolve({
      failed,
      ...(solved ? { solved } : {}),
      knownIntents: known,
      count: input.count,
      seed: input.seed + input.phase,
      firstTaskId,
    });
  }
  // Too few failures to evolve from (the actor solved nearly everything): the phase is topped
  // up with train tasks not asked before, so it never runs empty (unless a chat generator is
  // configured not to mix in embedded tasks).
  const mayTopUp = !generator || generator.fillWithEmbedded;
  if (mayTopUp && tasks.length < input.count) {
    const unasked = train.filter((t) => !askedBefore.has(t.intent));
    tasks = [...tasks, ...new Rng(input.seed).fork(`top-up-${input.phase}`).sample(unasked, input.count - tasks.length)];
  }
  return tasks;
}

/**
 * A phase's candidate tasks: the curriculum's from the failed ones, or (no curriculum, or nothing failed
 * yet: phase 0's probe) a sample of the train split with an equal share of each template. Why equal: the
 * curriculum evolves only from what the probe failed, so a template the probe never drew is never
 * tried; on bench:learning r9's seed 2 a uniform probe of 16 drew none of enter-text's 64 of 256 train
 * tasks, and no phase ever tried the type that seed 1's RL learned (docs/benchmarks.md).
 */
async function generateTasks(deps: ControlDeps, input: InputOf<'generateTasks'>) {
  const { ctx } = deps;
  const key = ctx.key(input, 'tasks', 'candidates');
  return ctx.once(key, async () => {
    const config = await ctx.config(input);
    const { backend, settings } = backendOf(config);
    const evolve = backend.evolve?.bind(backend, settings);
    const train = await ctx.tasks(config, 'train');
    const tasks =
      !input.curriculum || !input.failedTasks
        ? new Rng(input.seed).fork(`train-sample-${input.phase}`).stratifiedSample(train, input.count, taskTemplate)
        : await curriculumTasks(deps, input, config, train, evolve, input.failedTasks);
    const ref = await ctx.writeDataset(ctx.key(input, 'tasks', 'candidates.jsonl'), tasks);
    return { objects: await ctx.datasetObjects(ref), data: ref };
  });
}

/** The held-out test tasks: the same sample every phase, so phases are compared on the same tasks. */
async function evaluationTasks({ ctx }: ControlDeps, scope: InputOf<'evaluationTasks'>) {
  return ctx.once(ctx.key(scope, 'tasks', 'test'), async () => {
    const config = await ctx.config(scope);
    const tasks = heldOutTasks(await ctx.tasks(config, 'test'), config.campaign.environment.testTasks, scope.seed);
    const ref = await ctx.writeDataset(ctx.key(scope, 'tasks', 'test.jsonl'), tasks);
    return { objects: await ctx.datasetObjects(ref), data: ref };
  });
}

/** Success on the test split, overall, per site and per task (and MiniWoB++'s per-type score when its tasks ran). */
async function summarizeEvaluation({ ctx }: ControlDeps, input: InputOf<'summarizeEvaluation'>) {
  return ctx.once(ctx.key(input, 'eval'), async () => {
    const rows = (await Promise.all(input.shards.map((shard) => ctx.readDataset<TrajectoryIndexRow>(shard)))).flat();
    const bySite = new Map<string, number[]>();
    for (const row of rows) bySite.set(row.site, [...(bySite.get(row.site) ?? []), row.score]);
    const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
    const result: EvaluationResult = {
      successRate: mean(rows.map((r) => r.score)),
      perSite: Object.fromEntries([...bySite.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([site, scores]) => [site, mean(scores)])),
      tasks: rows.map((r) => ({ taskId: r.taskId, site: r.site, score: r.score, steps: r.steps, answer: r.answer })),
    };
    const suite = miniwobSuiteScore(rows.map((r) => ({ taskId: r.taskId, score: r.score, infraFailure: false })));
    if (suite.types.length > 0) result.miniwob = suite;
    const evaluation = ctx.key(input, 'eval.json');
    const object = await ctx.store.putJson(evaluation, result);
    return { objects: [object], data: { evaluation, successRate: result.successRate, perSite: result.perSite } };
  });
}

/** The phase manifest, written last: its numbers, what it carries on, its artifacts and the served actor. */
async function publishPhase({ ctx }: ControlDeps, input: InputOf<'publishPhase'>) {
  // Refuses to publish under a config other than the campaign's (see CampaignContext.config).
  await ctx.config(input);
  const key = phaseManifestKey(input.campaignId, input.phase);
  const summary: PhaseSummary = { phase: input.phase, manifestKey: key, ...input.numbers };
  const datasets = [input.tasks, input.rewards, input.experience, input.carry.failedTasks, input.carry.replayBuffer];
  const objects = await ctx.datasetObjects(...datasets);
  for (const model of Object.values(input.carry.models)) {
    const published = await ctx.store.readManifest(manifestKey(model));
    if (published) objects.push(...published.objects);
  }
  // The name the phase's actor is served under, when a serving backend deployed it.
  const served = await ctx.store.tryGetJson<ServedModelRecord>(servedRecordKey(input.carry.models.actor));
  // What training this phase's actor did, when the phase trained it and its trainer told.
  const actorKey = ctx.key(input, 'checkpoints', 'actor.onnx');
  const actorTraining = input.carry.models.actor === actorKey ? await ctx.store.tryGetJson<TrainerMetrics>(trainerMetricsKey(actorKey)) : undefined;
  const data: PhaseManifestData = {
    campaignId: input.campaignId,
    phase: input.phase,
    ...(input.configSha256 ? { configSha256: input.configSha256 } : {}),
    summary,
    carry: input.carry,
    artifacts: { tasks: input.tasks, rewards: input.rewards, experience: input.experience, evaluation: input.evaluation },
    ...(served ? { served: { actor: { name: served.name, checkpoint: served.checkpoint } } } : {}),
    training: { actor: actorTraining ?? null },
  };
  const manifest = await ctx.store.publishManifest(key, objects, data);
  return { manifestKey: key, summary: manifest.data.summary };
}

export function createControlActivities(deps: ControlDeps): ControlActivities {
  return {
    generateTasks: (input) => generateTasks(deps, input),
    evaluationTasks: (scope) => evaluationTasks(deps, scope),
    summarizeEvaluation: (input) => summarizeEvaluation(deps, input),
    publishPhase: (input) => publishPhase(deps, input),
  };
}
