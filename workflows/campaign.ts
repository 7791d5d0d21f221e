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
import type {
  CampaignInput,
  CampaignProgress,
  CampaignStatus,
  CarryOver,
  DatasetRef,
  PhaseFailure,
  PhaseScope,
  PhaseSettings,
  PhaseSummary,
} from './campaignTypes';
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

export async function campaignWorkflow(input: CampaignWorkflowInput): Promise<CampaignProgress> {
  const control = activitiesOn<'control'>(input.taskQueues.control, { startToClose: '10 minutes' });
  const heartbeat = `${input.heartbeatTimeoutSeconds ?? 30} seconds`;
  const browser = activitiesOn<'browser'>(input.taskQueues.browser, { startToClose: '4 hours', heartbeat });
  const train = activitiesOn<'train'>(input.taskQueues.train, { startToClose: '12 hours', heartbeat });

  let status: CampaignStatus = input.paused ? 'paused' : 'running';
  let paused = input.paused;
  let stopAfterPhase = input.stopAfterPhase;
  const settings = input.settings;
  let pendingSettings: Partial<PhaseSettings> | null = null;
  let currentActivity: string | null = null;
  let failure: PhaseFailure | null = null;
  let retryRequested = false;
  const counts: Record<string, number> = {};
  const phase = input.nextPhase;

  const progress = (): CampaignProgress => ({
    campaignId: input.campaignId,
    status,
    phase,
    phases: input.phases,
    activity: currentActivity,
    counts: { ...counts },
    history: input.history,
    failure,
    settings,
    pendingSettings,
  });

  const publishStatus = () => {
    upsertSearchAttributes([
      { key: STATUS, value: status },
      { key: PHASE, value: phase },
    ]);
    setCurrentDetails(renderPhaseTable(progress()));
  };

  setHandler(progressQuery, progress);
  setHandler(pauseSignal, () => {
    paused = true;
    if (status === 'running') status = 'paused';
    publishStatus();
  });
  setHandler(resumeSignal, () => {
    paused = false;
    if (status === 'paused') status = 'running';
    publishStatus();
  });
  setHandler(stopAfterPhaseSignal, () => {
    stopAfterPhase = true;
    publishStatus();
  });
  setHandler(
    updateSettingsUpdate,
    (update) => {
      pendingSettings = { ...(pendingSettings ?? {}), ...update };
      return { ...settings, ...pendingSettings };
    },
    { validator: (update) => checkSettingsUpdate({ ...settings, ...(pendingSettings ?? {}) }, update) },
  );
  setHandler(
    retryPhaseUpdate,
    () => {
      retryRequested = true;
      return phase;
    },
    {
      validator: () => {
        if (status !== 'waiting-for-operator') {
          throw new Error(`phase ${phase} has not failed (status: ${status}); nothing to retry`);
        }
      },
    },
  );

  /** Runs one activity step: honours pause, shows what runs, and names it in the UI. */
  async function step<T>(name: string, summary: string, run: (options: { summary: string }) => Promise<T>): Promise<T> {
    if (paused) {
      log.info('paused before activity', { phase, activity: name });
      await condition(() => !paused);
    }
    currentActivity = name;
    publishStatus();
    try {
      return await run({ summary: `phase ${phase} · ${summary}` });
    } finally {
      currentActivity = null;
    }
  }

  const scope: PhaseScope = {
    campaignId: input.campaignId,
    configKey: input.configKey,
    ...(input.configSha256 ? { configSha256: input.configSha256 } : {}),
    phase,
    seed: input.seed,
  };

  /**
   * Rolls out every task of `tasks` in shards, with a bounded number of shards in flight. When a shard
   * fails, the others are cancelled and waited for: while the phase waits for an operator nothing of it
   * runs on the sites, and a retried phase never runs a shard twice at once.
   */
  async function rollouts(tasks: DatasetRef, actor: string, purpose: 'train' | 'eval' | 'probe'): Promise<ShardResult[]> {
    const shardCount = Math.ceil(tasks.count / settings.rolloutShardSize);
    const results: ShardResult[] = new Array(shardCount);
    let next = 0;
    let failed: { error: unknown } | undefined;
    const lane = async () => {
      while (!failed && next < shardCount) {
        const shard = next++;
        const offset = shard * settings.rolloutShardSize;
        results[shard] = await browser.runRolloutShard.executeWithOptions(
          { summary: `phase ${phase} · ${purpose} rollouts, shard ${shard + 1}/${shardCount}` },
          [
            {
              ...scope,
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
        counts[`${purpose}Trajectories`] = (counts[`${purpose}Trajectories`] ?? 0) + results[shard]!.trajectories.count;
      }
    };
    if (paused) await condition(() => !paused);
    currentActivity = `${purpose} rollouts`;
    publishStatus();
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
    currentActivity = null;
    return results;
  }

  async function runPhase(): Promise<{ summary: PhaseSummary; carry: CarryOver }> {
    let models = input.carry?.models;
    let replayBuffer: DatasetRef | null = input.carry?.replayBuffer ?? null;
    let failedTasks: DatasetRef | null = input.carry?.failedTasks ?? null;
    let tasksGenerated = 0;
    let tasksKept = 0;
    let trainingSteps = 0;

    let trainingTasks: DatasetRef;
    let demos: Demonstrations | null = null;
    const checksEnvironment = input.environmentChecks === true;
    if (checksEnvironment) {
      deprecatePatch('webarena-environment-checks');
      await step('prepareEnvironment', 'site resets and health check', (o) =>
        browser.prepareEnvironment.executeWithOptions(o, [{ ...scope, moment: 'phase' }]),
      );
    }
    if (phase === 0) {
      const collected = await step('collectDemonstrations', 'oracle demonstrations', (o) => browser.collectDemonstrations.executeWithOptions(o, [scope]));
      demos = collected;
      counts.demonstrations = collected.demonstrations.count;
      const sft = await step('trainSft', 'SFT of actor, critic and ORM', (o) => train.trainSft.executeWithOptions(o, [{ ...scope, ...collected }]));
      models = sft.models;
      trainingSteps += sft.steps;
      deprecatePatch('deploy-models');
      await step('deployModels', 'serve the SFT actor', (o) => train.deployModels.executeWithOptions(o, [{ ...scope, actor: models!.actor }]));
      // Probe the SFT actor on train tasks: its failures seed the first curriculum phase.
      trainingTasks = await step('generateTasks', 'probe tasks from the train split', (o) =>
        control.generateTasks.executeWithOptions(o, [{ ...scope, failedTasks: null, count: settings.tasksPerPhase, curriculum: false }]),
      );
    } else {
      if (!models) throw ApplicationFailure.nonRetryable(`phase ${phase} has no models carried from phase ${phase - 1}`);
      // More candidates than tasks rolled out, so the critic filter chooses rather than only drops.
      deprecatePatch('critic-filter-chooses-from-more-candidates');
      const count = settings.tasksPerPhase * settings.candidateFactor;
      const candidates = await step('generateTasks', settings.curriculum ? 'tasks evolved from failures' : 'tasks from the train split', (o) =>
        control.generateTasks.executeWithOptions(o, [{ ...scope, failedTasks, count, curriculum: settings.curriculum }]),
      );
      tasksGenerated = candidates.count;
      const kept = await step('filterTasksByCritic', `critic filter [${settings.criticBand.join(', ')}]`, (o) =>
        browser.filterTasksByCritic.executeWithOptions(o, [
          { ...scope, candidates, critic: models!.critic, band: settings.criticBand, limit: settings.tasksPerPhase },
        ]),
      );
      trainingTasks = kept.tasks;
    }
    tasksKept = trainingTasks.count;
    counts.tasksKept = tasksKept;

    const shards = await rollouts(trainingTasks, models!.actor, phase === 0 ? 'probe' : 'train');
    if (demos) {
      deprecatePatch('fit-orm-and-critic-to-probe');
      // The SFT ORM and critic know only oracle plans; the probe shows them this actor's own outcomes.
      const fitted = await step('fitOrmAndCriticToProbe', "ORM and critic on the SFT actor's probe outcomes", (o) =>
        train.fitOrmAndCriticToProbe.executeWithOptions(o, [
          {
            ...scope,
            shards: shards.map((s) => s.trajectories),
            criticExamples: demos!.criticExamples,
            ormExamples: demos!.ormExamples,
            orm: models!.orm,
            critic: models!.critic,
          },
        ]),
      );
      models = { ...models!, orm: fitted.orm, critic: fitted.critic };
      trainingSteps += fitted.steps;
    }
    const scored = await step('scoreWithOrm', 'ORM scoring', (o) =>
      train.scoreWithOrm.executeWithOptions(o, [{ ...scope, shards: shards.map((s) => s.trajectories), orm: models!.orm }]),
    );
    counts.rolloutSuccesses = scored.successes;
    const experience = await step('filterExperience', 'replay buffer and perplexity filter', (o) =>
      train.filterExperience.executeWithOptions(o, [
        {
          ...scope,
          rewards: scored.rewards,
          tasks: trainingTasks,
          replayBuffer,
          actor: models!.actor,
          rankBand: settings.replayRankBand,
          cap: settings.replayCap,
        },
      ]),
    );
    replayBuffer = experience.replayBuffer;
    failedTasks = experience.failedTasks;

    if (phase > 0) {
      const critic = await step('trainCritic', 'critic training', (o) =>
        train.trainCritic.executeWithOptions(o, [{ ...scope, experience: experience.experience, critic: models!.critic }]),
      );
      const actor = await step('trainActor', 'actor training (KL-constrained)', (o) =>
        train.trainActor.executeWithOptions(o, [{ ...scope, experience: experience.experience, actor: models!.actor, critic: critic.critic }]),
      );
      models = { ...models!, critic: critic.critic, actor: actor.actor };
      trainingSteps += critic.steps + actor.steps;
      deprecatePatch('deploy-models');
      // Evaluation and the next phase ask the server for this phase's actor by its served name.
      await step('deployModels', "serve this phase's actor", (o) => train.deployModels.executeWithOptions(o, [{ ...scope, actor: models!.actor }]));
    }

    const testTasks = await step('evaluationTasks', 'held-out test tasks', (o) => control.evaluationTasks.executeWithOptions(o, [scope]));
    if (checksEnvironment) {
      await step('prepareEnvironment', 'site resets and health check before evaluation', (o) =>
        browser.prepareEnvironment.executeWithOptions(o, [{ ...scope, moment: 'evaluation' }]),
      );
    }
    const evalShards = await rollouts(testTasks, models!.actor, 'eval');
    const evaluation = await step('summarizeEvaluation', 'success on the test split', (o) =>
      control.summarizeEvaluation.executeWithOptions(o, [{ ...scope, shards: evalShards.map((s) => s.trajectories) }]),
    );
    const carry: CarryOver = { models: models!, failedTasks, replayBuffer };
    const published = await step('publishPhase', 'phase manifest', (o) =>
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
            tasksGenerated,
            tasksKept,
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

  publishStatus();
  let outcome: { summary: PhaseSummary; carry: CarryOver };
  for (;;) {
    try {
      outcome = await runPhase();
      break;
    } catch (error) {
      if (!(error instanceof ActivityFailure)) throw error;
      const cause = error.cause as { message?: string; type?: string } | undefined;
      failure = {
        phase,
        activity: error.activityType,
        message: cause?.message ?? error.message,
        ...(cause && 'type' in cause && cause.type ? { type: cause.type } : {}),
      };
      status = 'waiting-for-operator';
      log.error('phase failed; waiting for an operator to retry it', { ...failure });
      publishStatus();
      retryRequested = false;
      await condition(() => retryRequested || stopAfterPhase);
      if (!retryRequested) {
        status = 'stopped';
        publishStatus();
        await condition(allHandlersFinished);
        return progress();
      }
      failure = null;
      status = paused ? 'paused' : 'running';
      publishStatus();
    }
  }

  const history = [...input.history, outcome.summary].slice(-CARRIED_HISTORY);
  upsertSearchAttributes([{ key: SUCCESS_RATE, value: outcome.summary.successRate }]);
  const nextSettings = { ...settings, ...(pendingSettings ?? {}) };
  const finished = phase >= input.phases;
  if (finished || stopAfterPhase) {
    status = finished ? 'completed' : 'stopped';
    const final: CampaignProgress = { ...progress(), history, settings: nextSettings, pendingSettings: null };
    upsertSearchAttributes([{ key: STATUS, value: status }]);
    setCurrentDetails(renderPhaseTable(final));
    await condition(allHandlersFinished);
    return final;
  }
  await condition(allHandlersFinished);
  log.info('phase published; continuing as new', { phase, events: workflowInfo().historyLength });
  return continueAsNew<typeof campaignWorkflow>({
    ...input,
    nextPhase: phase + 1,
    carry: outcome.carry,
    history,
    settings: nextSettings,
    paused,
    stopAfterPhase: false,
  });
}
