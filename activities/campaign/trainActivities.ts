/**
 * Activities of the train task queue: ORM scoring, experience filtering (replay buffer with the
 * perplexity band), and training (SFT; critic, then the KL-constrained actor) by the campaign's trainer
 * (its backend's: models/backends/embedded/trainer.ts, models/backends/external/trainer.ts). The models
 * behind each role come resolved (models/backends/roles.ts).
 */
import type { EnvironmentTask } from '../../env/backends/contract';
import { Rng } from '../../env/random';
import { outcomeState } from '../../models/orm';
import type { DatasetRef, PhaseScope } from '../../storage/keys';
import type { PromptBuilder } from '../../browser/policies/promptBudget';
import type { CompletionsActorSettings } from '../../models/backends/completions/settings';
import type { Demonstrations, TrainActivities } from './contract';
import { actorInitKey, actorSftRecords, criticSftRecords } from './phaseZeroData';
import type { CampaignContext } from './context';
import type { ObjectInfo } from '../../storage/artifactStore';
import type { Config } from '../../config/campaignConfig';
import type { TrajectoryIndexRow, TrajectoryRecord } from './episodes';
import { criticExamplesOf, ormExamplesOf, type CriticExample } from './models';
import type { TrainSpec } from '../../models/backends/roles';
import type { RolesFor } from './backends';
import { trainingRecordsKey, type TrainingStepRecord } from '../../models/train/trainingRecord';
import { trainerMetricsKey } from '../../models/train/trainerMetrics';
import { replayedSource, stepRecordOf } from './trainingRecords';
import { experienceRowsOf, type ExperienceRow } from './experience';

export interface RewardRow {
  taskId: string;
  site: string;
  trajectoryKey: string;
  reward: number;
  /** Who gave the reward: the ORM, or the task's evaluator (campaign.reward = 'evaluator'). */
  rewardFrom: 'orm' | 'evaluator';
  /** The ORM's P(YES); null when the ORM did not judge it (the evaluator's score is the reward: campaign.reward = 'evaluator'). */
  pYes: number | null;
  /** The evaluator's score, kept to measure the ORM; used for training only with campaign.reward = 'evaluator'. */
  score: number;
  /** Whether the task had an evaluator (else `score` means nothing). */
  graded: boolean;
}

/** What the train activities work with: the campaign's storage and context, and its resolved model roles. */
interface TrainDeps {
  ctx: CampaignContext;
  roles: RolesFor;
}

type InputOf<A extends keyof TrainActivities> = Parameters<TrainActivities[A]>[0];

/** One training job, by the campaign's trainer, published once under its checkpoint's key. */
async function trainModel({ ctx, roles }: TrainDeps, spec: TrainSpec): Promise<{ key: string; steps: number; objects: ObjectInfo[] }> {
  const key = ctx.key(spec.scope, 'checkpoints', `${spec.file ?? spec.name}.onnx`);
  const stateKey = ctx.key(spec.scope, 'checkpoints', `${spec.file ?? spec.name}.train-state`);
  return ctx.once(key, async () => {
    const config = await ctx.config(spec.scope);
    const { steps, objects, metrics } = await roles(config).trainer.train(spec, { key, stateKey, training: config.campaign.training });
    // Beside the checkpoint, whichever trainer wrote it: the phase manifest reads the actor's from here.
    if (metrics) objects.push(await ctx.store.putJson(trainerMetricsKey(key), metrics));
    return { objects, data: { key, steps, objects } };
  });
}

/**
 * A completions actor's phase-0 SFT pairs as training records beside the demonstrations (activities/
 * campaign/phaseZeroData.ts), which the external trainer then reads; and the key of its init checkpoint.
 */
async function completionsSftData(
  ctx: CampaignContext,
  scope: PhaseScope & Demonstrations,
  actor: CompletionsActorSettings,
  prompts: PromptBuilder,
): Promise<{ actorPairs: number; key: string | undefined }> {
  const actorRecords = await actorSftRecords(scope.campaignId, actor, prompts, ctx.store, await ctx.readDataset(scope.demonstrations));
  if (actorRecords.length) await ctx.writeDataset(trainingRecordsKey(scope.demonstrations.key), actorRecords);
  return { actorPairs: actorRecords.length, key: await actorInitKey(actor, ctx.store, ctx.key(scope, 'checkpoints', 'actor-init')) };
}

/**
 * With an actor served as text, a critic dataset's training records beside it: an external trainer then
 * reads each state as that actor's prompt, as the served critic is asked.
 */
async function writeCriticRecords(
  ctx: CampaignContext,
  campaignId: string,
  prompts: PromptBuilder | undefined,
  data: DatasetRef,
  examples: readonly CriticExample[],
): Promise<DatasetRef[]> {
  if (!prompts) return [];
  return [await ctx.writeDataset(trainingRecordsKey(data.key), await criticSftRecords(campaignId, prompts, examples))];
}

/** Phase 0's oracle demonstrations (the SFT data) as experience: each successful oracle trajectory, in task order. */
async function demonstrationRows(ctx: CampaignContext, scope: PhaseScope): Promise<ExperienceRow[]> {
  const keys: string[] = [];
  for await (const { key } of ctx.store.list(`${ctx.key(scope, 'demonstrations', 'oracle')}/trajectories/`)) keys.push(key);
  const oracle = await Promise.all(keys.sort().map((key) => ctx.store.getJson<TrajectoryRecord>(key)));
  return oracle
    .filter((record) => record.score === 1)
    .flatMap((record) => experienceRowsOf(record, 1).map((row): ExperienceRow => ({ ...row, origin: 'demonstration' })));
}

async function trajectoryRecords(ctx: CampaignContext, shards: DatasetRef[]): Promise<TrajectoryRecord[]> {
  const rows = (await Promise.all(shards.map((shard) => ctx.readDataset<TrajectoryIndexRow>(shard)))).flat();
  return Promise.all(rows.map((row) => ctx.store.getJson<TrajectoryRecord>(row.trajectoryKey)));
}

/** What the models carry for an ORM the campaign does not train: the config's role, by backend. */
function untrainedOrmRef(config: Config): string {
  return `models.orm (${config.models.orm.backend}, not trained by the campaign)`;
}

/** What trainSft's models carry for a model phase 0 trains after the probe (fitOrmAndCriticToProbe). */
function afterProbeRef(role: 'critic' | 'orm'): string {
  return `models.${role} (trained after the probe)`;
}

/**
 * Phase 0's SFT: the actor on the demonstrations (or its init checkpoint as it is). A critic or ORM the
 * campaign trains for its role is trained once, after the probe, on the demonstrations and the probe's
 * outcomes together (fitOrmAndCriticToProbe); only a critic whose role is valued elsewhere (its checkpoint
 * still gives the actor's advantages) is trained here, on the demonstrations.
 */
async function trainSft(deps: TrainDeps, input: InputOf<'trainSft'>) {
  const { ctx, roles } = deps;
  return ctx.once(ctx.key(input, 'checkpoints', 'sft'), async () => {
    const config = await ctx.config(input);
    const { training } = config.campaign;
    const role = roles(config);
    const { prompts, phaseZero } = role.actor;
    const init = phaseZero && prompts ? await completionsSftData(ctx, input, phaseZero, prompts) : undefined;
    // A completions actor with no SFT pairs at all (no oracle, no file) starts the campaign from its init checkpoint as it is.
    const actor =
      init?.actorPairs === 0 && init.key
        ? { key: init.key, steps: 0, objects: [] as ObjectInfo[] }
        : await trainModel(deps, {
            scope: input,
            name: 'actor',
            objective: 'actor-sft',
            data: input.demonstrations,
            epochs: training.sftEpochs,
            ...(init?.key ? { init: init.key } : {}),
          });
    let critic = { key: afterProbeRef('critic'), steps: 0, objects: [] as ObjectInfo[] };
    if (!role.critic.trainedByCampaign) {
      const examples = await ctx.readDataset<CriticExample>(input.criticExamples);
      await writeCriticRecords(ctx, input.campaignId, prompts, input.criticExamples, examples);
      critic = await trainModel(deps, { scope: input, name: 'critic', objective: 'critic', data: input.criticExamples, epochs: training.sftEpochs });
    }
    const orm = role.orm.trainedByCampaign ? afterProbeRef('orm') : untrainedOrmRef(config);
    const objects = [...actor.objects, ...critic.objects];
    return { objects, data: { models: { actor: actor.key, critic: critic.key, orm }, steps: actor.steps + critic.steps } };
  });
}

/**
 * Phase 0, after the probe: the ORM and the critic the campaign trains for their roles, each once, on the
 * demonstrations' examples and the SFT actor's graded probe outcomes (none when no probe task had an
 * evaluator: then the demonstrations alone).
 */
async function fitOrmAndCriticToProbe(deps: TrainDeps, input: InputOf<'fitOrmAndCriticToProbe'>) {
  const { ctx, roles } = deps;
  return ctx.once(ctx.key(input, 'checkpoints', 'probe-fit'), async () => {
    const config = await ctx.config(input);
    const { training } = config.campaign;
    // Only the evaluators' labels are used: a task without an evaluator says nothing here.
    const graded = (await trajectoryRecords(ctx, input.shards)).filter((record) => record.graded && record.rounds.length > 0);
    const { orm: ormRole, critic: criticRole, actor } = roles(config);
    let orm = { key: input.orm, steps: 0, objects: [] as ObjectInfo[] };
    let critic = { key: input.critic, steps: 0, objects: [] as ObjectInfo[] };
    const datasets: DatasetRef[] = [];
    if (ormRole.trainedByCampaign) {
      const data = await ctx.writeDataset(ctx.key(input, 'probe-fit', 'orm.jsonl'), [...(await ctx.readDataset(input.ormExamples)), ...ormExamplesOf(graded)]);
      datasets.push(data);
      orm = await trainModel(deps, { scope: input, name: 'orm', file: 'orm-probe-fit', objective: 'orm', data, epochs: training.ormEpochs });
    }
    if (criticRole.trainedByCampaign) {
      const examples = [...(await ctx.readDataset<CriticExample>(input.criticExamples)), ...criticExamplesOf(graded)];
      const data = await ctx.writeDataset(ctx.key(input, 'probe-fit', 'critic.jsonl'), examples);
      datasets.push(data, ...(await writeCriticRecords(ctx, input.campaignId, actor.prompts, data, examples)));
      critic = await trainModel(deps, { scope: input, name: 'critic', file: 'critic-probe-fit', objective: 'critic', data, epochs: training.sftEpochs });
    }
    const objects = [...(await ctx.datasetObjects(...datasets)), ...orm.objects, ...critic.objects];
    return { objects, data: { orm: orm.key, critic: critic.key, steps: orm.steps + critic.steps, outcomes: graded.length } };
  });
}

/** Each trajectory's reward: the ORM's verdict, or with campaign.reward = 'evaluator' a graded trajectory's score. */
async function scoreWithOrm({ ctx, roles }: TrainDeps, input: InputOf<'scoreWithOrm'>) {
  return ctx.once(ctx.key(input, 'rewards'), async () => {
    const config = await ctx.config(input);
    const rows = (await Promise.all(input.shards.map((shard) => ctx.readDataset<TrajectoryIndexRow>(shard)))).flat();
    const all = await trajectoryRecords(ctx, input.shards);
    // With campaign.reward = 'evaluator' a graded trajectory's reward is its score: the ORM is not asked.
    const byEvaluator = all.map((record) => config.campaign.reward === 'evaluator' && record.graded);
    const states = all.map((record, i) => (byEvaluator[i] ? null : outcomeState(record.intent, record.rounds)));
    const judgeable = states.flatMap((state, i) => (state ? [{ id: rows[i]!.trajectoryKey, state }] : []));
    // A trajectory the ORM gave no usable verdict for gets reward 0, and the failure is kept.
    const { verdicts: scored, failures } = judgeable.length ? await roles(config).orm.judge(input.orm, judgeable) : { verdicts: [], failures: [] };
    let next = 0;
    const rewards: RewardRow[] = all.map((record, i) => {
      const row = { taskId: record.taskId, site: record.site, trajectoryKey: rows[i]!.trajectoryKey, score: record.score, graded: record.graded };
      if (byEvaluator[i]) return { ...row, pYes: null, reward: record.score >= 1 ? 1 : 0, rewardFrom: 'evaluator' };
      // A trajectory with no step (the start page failed to load) cannot be judged: reward 0.
      const verdict = (states[i] ? scored[next++] : null) ?? { pYes: 0, reward: 0 };
      return { ...row, pYes: verdict.pYes, reward: verdict.reward, rewardFrom: 'orm' };
    });
    const ref = await ctx.writeDataset(ctx.key(input, 'rewards.jsonl'), rewards);
    if (failures.length) await ctx.store.putJson(ctx.key(input, 'rewards-failures.json'), failures);
    const successes = rewards.filter((r) => r.reward === 1).length;
    return { objects: await ctx.datasetObjects(ref), data: { rewards: ref, successes } };
  });
}

/** This phase's steps with their rewards; the successful ones; the tasks that failed (the next curriculum's seeds). */
async function phaseExperience(ctx: CampaignContext, input: InputOf<'filterExperience'>) {
  const rewards = await ctx.readDataset<RewardRow>(input.rewards);
  const tasks = new Map((await ctx.readDataset<EnvironmentTask>(input.tasks)).map((t) => [String(t.task_id), t]));
  const current: ExperienceRow[] = [];
  const successes: ExperienceRow[] = [];
  const failed: EnvironmentTask[] = [];
  for (const reward of rewards) {
    const steps = experienceRowsOf(await ctx.store.getJson<TrajectoryRecord>(reward.trajectoryKey), reward.reward);
    current.push(...steps);
    if (reward.reward === 1) successes.push(...steps);
    else if (tasks.has(reward.taskId)) failed.push(tasks.get(reward.taskId)!);
  }
  return { current, successes, failed };
}

/**
 * Replay: earlier phases' successes, kept where the current actor finds them neither mastered nor alien
 * (rank = exp(mean token log-prob) in the band), and the SFT demonstrations whatever their rank, at most
 * `cap` x this phase's steps. The demonstrations are there to anchor what SFT taught, and SFT itself
 * moved them out of the band: after it, none of bench:learning's 31 was replayed, so its RL phases
 * trained on no positive row and the critic, seeing only failures, valued every task at 0. The actor is the
 * one the phase trains from, as served (also the KL reference of the records' log-probs). An actor
 * trained from records has this phase's steps scored too (their reference log-probs); a step that
 * cannot be scored is left out of this phase's replay, or has null log-probs in its training record
 * (and is recorded). Phase 0 trains no actor on its probe: nothing to score.
 */
async function replayInBand(
  ctx: CampaignContext,
  input: InputOf<'filterExperience'>,
  actor: ReturnType<RolesFor>['actor'],
  buffer: ExperienceRow[],
  current: ExperienceRow[],
) {
  const recordsCurrent = actor.prompts !== undefined && input.phase > 0;
  const items = [...buffer, ...(recordsCurrent ? current : [])].map((row, i) => ({
    id: `${row.taskId}#${i}`,
    state: row.state,
    response: row.response,
  }));
  const scoring = items.length ? await actor.logProbs(input.actor, items) : { logProbs: [], failures: [] };
  const logProbs = scoring.logProbs.slice(0, buffer.length);
  const currentLogProbs = recordsCurrent ? scoring.logProbs.slice(buffer.length) : undefined;
  if (scoring.failures.length) await ctx.store.putJson(ctx.key(input, 'replay-logprob-failures.json'), scoring.failures);
  const [low, high] = input.rankBand;
  const replayable = buffer.flatMap((_, i) => {
    const scored = logProbs[i];
    if (!scored) return [];
    const rank = Math.exp(scored.meanTokenLogProb);
    return buffer[i]!.origin === 'demonstration' || (rank > low && rank <= high) ? [i] : [];
  });
  const replayedIndices = new Rng(input.seed).fork(`replay-${input.phase}`).sample(replayable, Math.floor(input.cap * current.length));
  return { replayedIndices, logProbs, currentLogProbs };
}

/** The training set (this phase's steps and the replayed ones), the next replay buffer and the failed tasks. */
async function filterExperience({ ctx, roles }: TrainDeps, input: InputOf<'filterExperience'>) {
  return ctx.once(ctx.key(input, 'experience'), async () => {
    const { current, successes, failed } = await phaseExperience(ctx, input);
    const buffer = input.replayBuffer ? await ctx.readDataset<ExperienceRow>(input.replayBuffer) : [];
    const config = await ctx.config(input);
    const actor = roles(config).actor;
    const prompts = actor.prompts;
    const { replayedIndices, logProbs, currentLogProbs } = await replayInBand(ctx, input, actor, buffer, current);
    const replayed = replayedIndices.map((i) => buffer[i]!);

    // The buffer keeps one successful trajectory per task; it starts with the demonstrations when the
    // campaign replays them (added after phase 0's own replay, which trains nothing).
    const demonstrations = input.phase === 0 && config.campaign.training.replayDemonstrations ? await demonstrationRows(ctx, input) : [];
    const known = new Set([...demonstrations, ...buffer].map((row) => row.taskId));
    const added = successes.filter((row) => !known.has(row.taskId));
    const experience = await ctx.writeDataset(ctx.key(input, 'experience.jsonl'), [...current, ...replayed]);
    const replayBuffer = await ctx.writeDataset(ctx.key(input, 'replay-buffer.jsonl'), [...demonstrations, ...buffer, ...added]);
    const failedTasks = await ctx.writeDataset(ctx.key(input, 'failed-tasks.jsonl'), failed);
    const written = [experience, replayBuffer, failedTasks];
    if (currentLogProbs && prompts) {
      // The records an external trainer reads, beside the experience: the same rows in the same order.
      const scope = { campaignId: input.campaignId, phase: input.phase, gamma: config.campaign.training.gamma, prompts };
      written.push(
        await ctx.writeDataset(trainingRecordsKey(experience.key), [
          ...(await Promise.all(current.map((row, i) => stepRecordOf(row, 'rollout', currentLogProbs[i] ?? null, scope)))),
          ...(await Promise.all(replayedIndices.map((i) => stepRecordOf(buffer[i]!, replayedSource(buffer[i]!), logProbs[i] ?? null, scope)))),
        ]),
      );
    }
    return {
      objects: await ctx.datasetObjects(...written),
      data: { experience, replayBuffer, failedTasks, replayedSteps: replayed.length, currentSteps: current.length },
    };
  });
}

/**
 * The critic's share of a phase's experience: the actor's own steps, this phase's and replayed ones,
 * without the replayed demonstrations (and their training records likewise). The demonstrations anchor
 * the actor; the critic values what the actor itself achieves from a state, and oracle successes would
 * teach it that every task is solved (docs/webrl-fidelity.md).
 */
async function criticExperience(ctx: CampaignContext, input: InputOf<'trainCritic'>): Promise<DatasetRef> {
  const rows = await ctx.readDataset<ExperienceRow>(input.experience);
  const own = rows.map((row) => row.origin !== 'demonstration');
  if (own.every(Boolean)) return input.experience;
  const experience = await ctx.writeDataset(
    ctx.key(input, 'critic-experience.jsonl'),
    rows.filter((_, i) => own[i]),
  );
  const records = trainingRecordsKey(input.experience.key);
  if (await ctx.store.exists(records)) {
    const all = await ctx.readDataset<TrainingStepRecord>({ ...input.experience, key: records });
    await ctx.writeDataset(
      trainingRecordsKey(experience.key),
      all.filter((_, i) => own[i]),
    );
  }
  return experience;
}

async function trainCritic(deps: TrainDeps, input: InputOf<'trainCritic'>) {
  // A phase without experience of its own (nothing kept, nothing rolled out) leaves the models as they were.
  const experience = input.experience.count === 0 ? input.experience : await criticExperience(deps.ctx, input);
  if (experience.count === 0) return { critic: input.critic, steps: 0 };
  const config = await deps.ctx.config(input);
  const { key, steps } = await trainModel(deps, {
    scope: input,
    name: 'critic',
    objective: 'critic',
    data: experience,
    epochs: config.campaign.training.criticEpochs,
    init: input.critic,
  });
  return { critic: key, steps };
}

async function trainActor(deps: TrainDeps, input: InputOf<'trainActor'>) {
  if (input.experience.count === 0) return { actor: input.actor, steps: 0 };
  const config = await deps.ctx.config(input);
  const { key, steps } = await trainModel(deps, {
    scope: input,
    name: 'actor',
    objective: 'actor-webrl',
    data: input.experience,
    epochs: config.campaign.training.actorEpochs,
    init: input.actor,
    reference: input.actor,
    critic: input.critic,
  });
  return { actor: key, steps };
}

export function createTrainActivities(deps: TrainDeps): Omit<TrainActivities, 'deployModels'> {
  return {
    trainSft: (input) => trainSft(deps, input),
    fitOrmAndCriticToProbe: (input) => fitOrmAndCriticToProbe(deps, input),
    scoreWithOrm: (input) => scoreWithOrm(deps, input),
    filterExperience: (input) => filterExperience(deps, input),
    trainCritic: (input) => trainCritic(deps, input),
    trainActor: (input) => trainActor(deps, input),
  };
}
