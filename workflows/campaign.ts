/**
 * The WebRL campaign: SFT (phase 0), then phases 1..N of self-evolving curriculum RL. One workflow run
 * per phase (continue-as-new carries a few references forward), so histories stay bounded however long
 * the campaign runs. Reads like the procedure it runs; every byte of data stays in the artifact store.
 */
import {
  ActivityCancellationType,
  ActivityFailure,
  allHandlersFinished,
  CancellationScope,
  ApplicationFailure,
  condition,
  continueAsNew,
  defineQuery,
  defineSignal,
  defineUpdate,
  deprecatePatch,
  log,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { Demonstrations, QueueActivities, ShardResult } from '../activities/campaign/contract';
import type { CampaignInput, CampaignProgress, CampaignStatus, CarryOver, ModelRefs, PhaseFailure, PhaseSettings, PhaseSummary } from './campaignTypes';
import type { DatasetRef, PhaseScope } from '../storage/keys';
import { checkSettingsUpdate, renderPhaseTable } from './campaignSettings';
import { INFRASTRUCTURE_RETRY } from './retryPolicies';
import { PHASE, STATUS, SUCCESS_RATE } from '../temporal/searchAttributes';

export const pauseSignal = defineSignal('pause');
export const resumeSignal = defineSignal('resume');
export const stopAfterPhaseSignal = defineSignal('stopAfterPhase');
export const updateSettingsUpdate = defineUpdate<PhaseSettings, [Partial<PhaseSettings>]>('updateSettings');
export const retryPhaseUpdate = defineUpdate<number, []>('retryPhase');
export const progressQuery = defineQuery<CampaignProgress>('progress');

export interface TaskQueues {
  control: string;
  browser: string;
  train: string;
}

export interface CampaignWorkflowInput extends CampaignInput {
  taskQueues: TaskQueues;
}

/** Keeps the newest summaries in the carried state; the full history lives in the phase manifests. */
const CARRIED_HISTORY = 64;

/** The proxy for one queue, typed with that queue's activities only (activities/campaign/contract.ts). */
function activitiesOn<Q extends keyof QueueActivities>(taskQueue: string, timeouts: { startToClose: string; heartbeat?: string }) {
  return proxyActivities<QueueActivities[Q]>({
    taskQueue,
    startToCloseTimeout: timeouts.startToClose,
    ...(timeouts.heartbeat ? { heartbeatTimeout: timeouts.heartbeat } : {}),
    retry: INFRASTRUCTURE_RETRY,
    // A cancelled activity is waited for: once the workflow moves on, nothing of it still runs.
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  });
}

/** The proxies of one run, one per task queue. */
function queueProxies(input: CampaignWorkflowInput) {
  const heartbeat = `${input.heartbeatTimeoutSeconds ?? 30} seconds`;
  return {
    control: activitiesOn<'control'>(input.taskQueues.control, { startToClose: '10 minutes' }),
    browser: activitiesOn<'browser'>(input.taskQueues.browser, { startToClose: '4 hours', heartbeat }),
    train: activitiesOn<'train'>(input.taskQueues.train, { startToClose: '12 hours', heartbeat }),
  };
}

/** What the operator's signals and updates change, and the progress query shows. */
interface OperatorState {
  status: CampaignStatus;
  paused: boolean;
  stopAfterPhase: boolean;
  pendingSettings: Partial<PhaseSettings> | null;
  currentActivity: string | null;
  failure: PhaseFailure | null;
  retryRequested: boolean;
  counts: Record<string, number>;
}

/** One workflow run: one phase, its settings, its activities and the operator's state. */
interface PhaseRun {
  input: CampaignWorkflowInput;
  phase: number;
  settings: PhaseSettings;
  scope: PhaseScope;
  state: OperatorState;
  activities: ReturnType<typeof queueProxies>;
  progress(): CampaignProgress;
  publishStatus(): void;
}

function startRun(input: CampaignWorkflowInput): PhaseRun {
  const activities = queueProxies(input);
  const phase = input.nextPhase;
  const settings = input.settings;
  const state: OperatorState = {
    status: input.paused ? 'paused' : 'running',
    paused: input.paused,
    stopAfterPhase: input.stopAfterPhase,
    pendingSettings: null,
    currentActivity: null,
    failure: null,
    retryRequested: false,
    counts: {},
  };
  const progress = (): CampaignProgress => ({
    campaignId: input.campaignId,
    status: state.status,
    phase,
    phases: input.phases,
    activity: state.currentActivity,
    counts: { ...state.counts },
    history: input.history,
    failure: state.failure,
    settings,
    pendingSettings: state.pendingSettings,
  });
  const publishStatus = () => {
    upsertSearchAttributes([
      { key: STATUS, value: state.status },
      { key: PHASE, value: phase },
    ]);
    setCurrentDetails(renderPhaseTable(progress()));
  };
  const scope: PhaseScope = {
    campaignId: input.campaignId,
    configKey: input.configKey,
    ...(input.configSha256 ? { configSha256: input.configSha256 } : {}),
    phase,
    seed: input.seed,
  };
  return { input, phase, settings, scope, state, activities, progress, publishStatus };
}

/** The operator's controls: progress, pause, resume, stop after the phase, settings for the next phase, retry. */
function handleOperator(run: PhaseRun): void {
  const { state, settings, phase } = run;
  setHandler(progressQuery, run.progress);
  setHandler(pauseSignal, () => {
    state.paused = true;
    if (state.status === 'running') state.status = 'paused';
    run.publishStatus();
  });
  setHandler(resumeSignal, () => {
    state.paused = false;
    if (state.status === 'paused') state.status = 'running';
    run.publishStatus();
  });
  setHandler(stopAfterPhaseSignal, () => {
    state.stopAfterPhase = true;
    run.publishStatus();
  });
  setHandler(
    updateSettingsUpdate,
    (update) => {
      state.pendingSettings = { ...(state.pendingSettings ?? {}), ...update };
      return { ...settings, ...state.pendingSettings };
    },
    { validator: (update) => checkSettingsUpdate({ ...settings, ...(state.pendingSettings ?? {}) }, update) },
  );
  setHandler(
    retryPhaseUpdate,
    () => {
      state.retryRequested = true;
      return phase;
    },
    {
      validator: () => {
        if (state.status !== 'waiting-for-operator') {
          throw new Error(`phase ${phase} has not failed (status: ${state.status}); nothing to retry`);
        }
      },
    },
  );
}

/** Runs one activity step: honours pause, shows what runs, and names it in the UI. */
async function step<T>(run: PhaseRun, name: string, summary: string, activity: (options: { summary: string }) => Promise<T>): Promise<T> {
  if (run.state.paused) {
    log.info('paused before activity', { phase: run.phase, activity: name });
    await condition(() => !run.state.paused);
  }
  run.state.currentActivity = name;
  run.publishStatus();
  try {
    return await activity({ summary: `phase ${run.phase} · ${summary}` });
  } finally {
    run.state.currentActivity = null;
  }
}

/**
 * Rolls out every task of `tasks` in shards, with a bounded number of shards in flight. When a shard
 * fails, the others are cancelled and waited for: while the phase waits for an operator nothing of it
 * runs on the sites, and a retried phase never runs a shard twice at once.
 */
async function rollouts(run: PhaseRun, tasks: DatasetRef, actor: string, purpose: 'train' | 'eval' | 'probe'): Promise<ShardResult[]> {
  const { settings, state } = run;
  const shardCount = Math.ceil(tasks.count / settings.rolloutShardSize);
  const results: ShardResult[] = new Array(shardCount);
  let next = 0;
  let failed: { error: unknown } | undefined;
  const lane = async () => {
    while (!failed && next < shardCount) {
      const shard = next++;
      const offset = shard * settings.rolloutShardSize;
      results[shard] = await run.activities.browser.runRolloutShard.executeWithOptions(
        { summary: `phase ${run.phase} · ${purpose} rollouts, shard ${shard + 1}/${shardCount}` },
        [
          {
            ...run.scope,
            purpose,
            tasks,
            shard,
            offset,
            limit: Math.min(settings.rolloutShardSize, tasks.count - offset),
            actor,
            temperature: purpose === 'eval' ? 0 : settings.temperature,
          },
        ],
      );
      state.counts[`${purpose}Trajectories`] = (state.counts[`${purpose}Trajectories`] ?? 0) + results[shard]!.trajectories.count;
    }
  };
  if (state.paused) await condition(() => !state.paused);
  state.currentActivity = `${purpose} rollouts`;
  run.publishStatus();
  const lanes = Math.min(settings.rolloutShardsInFlight, shardCount);
  deprecatePatch('failed-shard-cancels-the-others');
  const shards = new CancellationScope();
  await shards.run(() =>
    Promise.allSettled(
      Array.from({ length: lanes }, () =>
        lane().catch((error: unknown) => {
          if (failed) return;
          failed = { error };
          shards.cancel();
        }),
      ),
    ),
  );
  if (failed) throw failed.error;
  state.currentActivity = null;
  return results;
}

/** Where a phase's training starts: its tasks and models, and for phase 0 the demonstrations. */
interface PhaseStart {
  tasks: DatasetRef;
  models: ModelRefs;
  demos: Demonstrations | null;
  tasksGenerated: number;
  trainingSteps: number;
}

/** Phase 0: SFT on oracle demonstrations, then probe tasks from the train split for the SFT actor. */
async function sftAndProbeTasks(run: PhaseRun): Promise<PhaseStart> {
  const { browser, train, control } = run.activities;
  const demos = await step(run, 'collectDemonstrations', 'oracle demonstrations', (o) => browser.collectDemonstrations.executeWithOptions(o, [run.scope]));
  run.state.counts.demonstrations = demos.demonstrations.count;
  const sft = await step(run, 'trainSft', 'SFT of the actor', (o) => train.trainSft.executeWithOptions(o, [{ ...run.scope, ...demos }]));
  const models = sft.models;
  deprecatePatch('deploy-models');
  await step(run, 'deployModels', 'serve the SFT actor', (o) => train.deployModels.executeWithOptions(o, [{ ...run.scope, actor: models.actor }]));
  // Probe the SFT actor on train tasks: its failures seed the first curriculum phase.
  const tasks = await step(run, 'generateTasks', 'probe tasks from the train split', (o) =>
    control.generateTasks.executeWithOptions(o, [{ ...run.scope, failedTasks: null, count: run.settings.tasksPerPhase, curriculum: false }]),
  );
  return { tasks, models, demos, tasksGenerated: 0, trainingSteps: sft.steps };
}

/** Phases 1..N: candidate tasks evolved from the carried failures, kept by the critic filter. */
async function curriculumTasks(run: PhaseRun): Promise<PhaseStart> {
  const { phase, settings } = run;
  const models = run.input.carry?.models;
  if (!models) throw ApplicationFailure.nonRetryable(`phase ${phase} has no models carried from phase ${phase - 1}`);
  // More candidates than tasks rolled out, so the critic filter chooses rather than only drops.
  deprecatePatch('critic-filter-chooses-from-more-candidates');
  const count = settings.tasksPerPhase * settings.candidateFactor;
  const failedTasks = run.input.carry?.failedTasks ?? null;
  const candidates = await step(run, 'generateTasks', settings.curriculum ? 'tasks evolved from failures' : 'tasks from the train split', (o) =>
    run.activities.control.generateTasks.executeWithOptions(o, [{ ...run.scope, failedTasks, count, curriculum: settings.curriculum }]),
  );
  const kept = await step(run, 'filterTasksByCritic', `critic filter [${settings.criticBand.join(', ')}]`, (o) =>
    run.activities.browser.filterTasksByCritic.executeWithOptions(o, [
      { ...run.scope, candidates, critic: models.critic, band: settings.criticBand, limit: settings.tasksPerPhase },
    ]),
  );
  return { tasks: kept.tasks, models, demos: null, tasksGenerated: candidates.count, trainingSteps: 0 };
}

/** Phase 0's critic and ORM learn from the oracle's plans and this actor's own probe outcomes together. */
async function fitOrmAndCriticToProbe(run: PhaseRun, shards: ShardResult[], demos: Demonstrations, models: ModelRefs) {
  deprecatePatch('fit-orm-and-critic-to-probe');
  const fitted = await step(run, 'fitOrmAndCriticToProbe', "critic and ORM on the demonstrations and the SFT actor's probe outcomes", (o) =>
    run.activities.train.fitOrmAndCriticToProbe.executeWithOptions(o, [
      {
        ...run.scope,
        shards: shards.map((s) => s.trajectories),
        criticExamples: demos.criticExamples,
        ormExamples: demos.ormExamples,
        orm: models.orm,
        critic: models.critic,
      },
    ]),
  );
  return { models: { ...models, orm: fitted.orm, critic: fitted.critic }, steps: fitted.steps };
}

/** Critic, then actor (KL-constrained, the new critic's advantages), then the new actor served. */
async function trainCriticAndActor(run: PhaseRun, experience: DatasetRef, models: ModelRefs) {
  const { train } = run.activities;
  const critic = await step(run, 'trainCritic', 'critic training', (o) =>
    train.trainCritic.executeWithOptions(o, [{ ...run.scope, experience, critic: models.critic }]),
  );
  const actor = await step(run, 'trainActor', 'actor training (KL-constrained)', (o) =>
    train.trainActor.executeWithOptions(o, [{ ...run.scope, experience, actor: models.actor, critic: critic.critic }]),
  );
  const trained = { ...models, critic: critic.critic, actor: actor.actor };
  deprecatePatch('deploy-models');
  // Evaluation and the next phase ask the server for this phase's actor by its served name.
  await step(run, 'deployModels', "serve this phase's actor", (o) => train.deployModels.executeWithOptions(o, [{ ...run.scope, actor: trained.actor }]));
  return { models: trained, steps: critic.steps + actor.steps };
}

/** One phase, from its tasks to its published manifest. */
async function runPhase(run: PhaseRun): Promise<{ summary: PhaseSummary; carry: CarryOver }> {
  const { phase, settings, scope, state } = run;
  const { browser, train, control } = run.activities;
  const checksEnvironment = run.input.environmentChecks === true;
  if (checksEnvironment) {
    deprecatePatch('webarena-environment-checks');
    await step(run, 'prepareEnvironment', 'site resets and health check', (o) =>
      browser.prepareEnvironment.executeWithOptions(o, [{ ...scope, moment: 'phase' }]),
    );
  }
  const start = phase === 0 ? await sftAndProbeTasks(run) : await curriculumTasks(run);
  const trainingTasks = start.tasks;
  let { models, trainingSteps } = start;
  state.counts.tasksKept = trainingTasks.count;

  const shards = await rollouts(run, trainingTasks, models.actor, phase === 0 ? 'probe' : 'train');
  if (start.demos) {
    const fitted = await fitOrmAndCriticToProbe(run, shards, start.demos, models);
    models = fitted.models;
    trainingSteps += fitted.steps;
  }
  const scored = await step(run, 'scoreWithOrm', 'ORM scoring', (o) =>
    train.scoreWithOrm.executeWithOptions(o, [{ ...scope, shards: shards.map((s) => s.trajectories), orm: models.orm }]),
  );
  state.counts.rolloutSuccesses = scored.successes;
  const experience = await step(run, 'filterExperience', 'replay buffer and perplexity filter', (o) =>
    train.filterExperience.executeWithOptions(o, [
      {
        ...scope,
        rewards: scored.rewards,
        tasks: trainingTasks,
        replayBuffer: run.input.carry?.replayBuffer ?? null,
        actor: models.actor,
        rankBand: settings.replayRankBand,
        cap: settings.replayCap,
      },
    ]),
  );
  if (phase > 0) {
    const trained = await trainCriticAndActor(run, experience.experience, models);
    models = trained.models;
    trainingSteps += trained.steps;
  }

  const testTasks = await step(run, 'evaluationTasks', 'held-out test tasks', (o) => control.evaluationTasks.executeWithOptions(o, [scope]));
  if (checksEnvironment) {
    await step(run, 'prepareEnvironment', 'site resets and health check before evaluation', (o) =>
      browser.prepareEnvironment.executeWithOptions(o, [{ ...scope, moment: 'evaluation' }]),
    );
  }
  const evalShards = await rollouts(run, testTasks, models.actor, 'eval');
  const evaluation = await step(run, 'summarizeEvaluation', 'success on the test split', (o) =>
    control.summarizeEvaluation.executeWithOptions(o, [{ ...scope, shards: evalShards.map((s) => s.trajectories) }]),
  );
  const carry: CarryOver = { models, failedTasks: experience.failedTasks, replayBuffer: experience.replayBuffer };
  const published = await step(run, 'publishPhase', 'phase manifest', (o) =>
    control.publishPhase.executeWithOptions(o, [
      {
        ...scope,
        carry,
        evaluation: evaluation.evaluation,
        tasks: trainingTasks,
        rewards: scored.rewards,
        experience: experience.experience,
        numbers: {
          successRate: evaluation.successRate,
          perSite: evaluation.perSite,
          tasksGenerated: start.tasksGenerated,
          tasksKept: trainingTasks.count,
          trajectories: scored.rewards.count,
          rolloutSuccesses: scored.successes,
          trainingSteps,
          replayedSteps: experience.replayedSteps,
        },
      },
    ]),
  );
  return { summary: published.summary, carry };
}

/**
 * Runs the phase until it is published. A failed activity leaves the phase waiting for an operator, who
 * retries it (it starts over) or stops the campaign (null).
 */
async function runPhaseUntilPublished(run: PhaseRun): Promise<{ summary: PhaseSummary; carry: CarryOver } | null> {
  const { state } = run;
  for (;;) {
    try {
      return await runPhase(run);
    } catch (error) {
      if (!(error instanceof ActivityFailure)) throw error;
      const cause = error.cause as { message?: string; type?: string } | undefined;
      state.failure = {
        phase: run.phase,
        activity: error.activityType,
        message: cause?.message ?? error.message,
        ...(cause && 'type' in cause && cause.type ? { type: cause.type } : {}),
      };
      state.status = 'waiting-for-operator';
      log.error('phase failed; waiting for an operator to retry it', { ...state.failure });
      run.publishStatus();
      state.retryRequested = false;
      await condition(() => state.retryRequested || state.stopAfterPhase);
      if (!state.retryRequested) {
        state.status = 'stopped';
        run.publishStatus();
        await condition(allHandlersFinished);
        return null;
      }
      state.failure = null;
      state.status = state.paused ? 'paused' : 'running';
      run.publishStatus();
    }
  }
}

/** After a published phase: the campaign ends (the last phase, or stop requested) or continues as new with the next phase. */
async function endOrContinue(run: PhaseRun, outcome: { summary: PhaseSummary; carry: CarryOver }): Promise<CampaignProgress> {
  const { input, state } = run;
  const history = [...input.history, outcome.summary].slice(-CARRIED_HISTORY);
  upsertSearchAttributes([{ key: SUCCESS_RATE, value: outcome.summary.successRate }]);
  const nextSettings = { ...run.settings, ...(state.pendingSettings ?? {}) };
  const finished = run.phase >= input.phases;
  if (finished || state.stopAfterPhase) {
    state.status = finished ? 'completed' : 'stopped';
    const final: CampaignProgress = { ...run.progress(), history, settings: nextSettings, pendingSettings: null };
    upsertSearchAttributes([{ key: STATUS, value: state.status }]);
    setCurrentDetails(renderPhaseTable(final));
    await condition(allHandlersFinished);
    return final;
  }
  await condition(allHandlersFinished);
  log.info('phase published; continuing as new', { phase: run.phase, events: workflowInfo().historyLength });
  return continueAsNew<typeof campaignWorkflow>({
    ...input,
    nextPhase: run.phase + 1,
    carry: outcome.carry,
    history,
    settings: nextSettings,
    paused: state.paused,
    stopAfterPhase: false,
  });
}

export async function campaignWorkflow(input: CampaignWorkflowInput): Promise<CampaignProgress> {
  const run = startRun(input);
  handleOperator(run);
  run.publishStatus();
  const outcome = await runPhaseUntilPublished(run);
  if (!outcome) return run.progress();
  return endOrContinue(run, outcome);
}
