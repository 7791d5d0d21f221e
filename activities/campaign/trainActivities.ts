/**
 * Activities of the train task queue: ORM scoring, experience filtering (replay buffer with the
 * perplexity band), and training (SFT; critic, then the KL-constrained actor). Training runs in a worker
 * thread; each training checkpoint is uploaded, so a job killed midway resumes from it on any host.
 */
import { Context } from '@temporalio/activity';
import { loadModelSecrets } from '../../config/secrets';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { EnvironmentTask } from '../../env/backends/contract';
import { Rng } from '../../env/random';
import { trainerVariables, type Objective } from '../../models/train/trainerContract';
import { runTrainingInWorker } from '../../models/train/runTraining';
import type { TrainingJob } from '../../models/train/trainer';
import type { ModelState } from '../../models/state';
import { outcomeState } from '../../models/orm';
import { StorageNotFoundError } from '../../storage/errors';
import type { DatasetRef, PhaseScope } from '../../workflows/campaignTypes';
import type { Config } from '../../config/schema';
import type { Demonstrations, TrainActivities } from './contract';
import { withHeartbeats, type CampaignContext } from './context';
import type { ObjectInfo } from '../../storage/artifactStore';
import type { TrajectoryIndexRow, TrajectoryRecord } from './episodes';
import { criticExamplesOf, monteCarloReturn, ormExamplesOf, type ModelCache } from './models';
import { actorPrompts, judgeEach, logProbsEach, remoteActorScorer, remoteOrm, remotePrompts, type BackendFailure } from './backends';
import { actorInitKey, actorSftRecords, criticSftRecords } from './phaseZeroData';
import { servedActor } from './deployActivities';
import { runExternalTrainer } from '../../models/remote/externalTrainer';
import type { ActionLogProb } from '../../models/actor';
import { TRAINING_RECORD_SCHEMA_VERSION, trainingRecordsKey } from '../../models/train/trainingRecord';
import { objectiveEnvironment } from '../../models/remote/trainerEnvironment';
import { stepRecordOf } from './trainingRecords';


export interface RewardRow {
  taskId: string;
  site: string;
  trajectoryKey: string;
  reward: number;
  /** Who gave the reward: the ORM, or the task's evaluator (campaign.reward = 'evaluator'). */
  rewardFrom: 'orm' | 'evaluator';
  pYes: number;
  /** The evaluator's score, kept to measure the ORM; used for training only with campaign.reward = 'evaluator'. */
  score: number;
  /** Whether the task had an evaluator (else `score` means nothing). */
  graded: boolean;
}

export interface ExperienceRow {
  taskId: string;
  state: ModelState;
  response: string;
  nextState: ModelState | null;
  reward: number;
  mcReturn: number;
  /** The trajectory this step belongs to, its place in it, its length and its reward (rows written before these were kept lack them). */
  traceId?: string;
  step?: number;
  steps?: number;
  trajectoryReward?: number;
}

interface TrainSpec {
  scope: PhaseScope;
  name: 'actor' | 'critic' | 'orm';
  /** The checkpoint's file name in the phase (default: `name`), when a phase trains a model twice. */
  file?: string;
  objective: Objective;
  data: DatasetRef;
  epochs: number;
  init?: string;
  reference?: string;
  critic?: string;
}

export function createTrainActivities(deps: { ctx: CampaignContext; models: ModelCache }): Omit<TrainActivities, 'deployModels'> {
  const { ctx, models } = deps;

  /**
   * One training job: data and models staged from the store, training in a worker thread with
   * heartbeats, each checkpoint uploaded; a retry downloads the last checkpoint and resumes.
   */
  async function trainModel(spec: TrainSpec): Promise<{ key: string; steps: number; objects: ObjectInfo[] }> {
    const key = ctx.key(spec.scope, 'checkpoints', `${spec.file ?? spec.name}.onnx`);
    const stateKey = ctx.key(spec.scope, 'checkpoints', `${spec.file ?? spec.name}.train-state`);
    return ctx.once(key, async () => {
      const config = await ctx.config(spec.scope);
      if (config.models.trainer.backend === 'external') return trainExternally(spec, key, config.models.trainer, config.campaign.training.batchSize);
      const dir = join(ctx.localRoot('training'), spec.scope.campaignId, `phase-${spec.scope.phase}`, spec.file ?? spec.name);
      await mkdir(dir, { recursive: true });
      const learningRate = config.campaign.training.learningRates[spec.objective];
      const dataPath = join(dir, 'data.jsonl');
      await ctx.store.downloadFile(spec.data.key, dataPath);
      const statePath = join(dir, 'model.onnx.state');
      let resume = false;
      try {
        await ctx.store.downloadFile(stateKey, statePath);
        resume = true;
      } catch (error) {
        if (!(error instanceof StorageNotFoundError)) throw error;
      }
      const job: TrainingJob = {
        objective: spec.objective,
        data: { path: dataPath },
        dataRefs: [spec.data.key],
        outPath: join(dir, 'model.onnx'),
        statePath,
        resume,
        seed: spec.scope.seed,
        epochs: spec.epochs,
        ...(learningRate ? { learningRate } : {}),
        batchSize: config.campaign.training.batchSize,
        checkpointEvery: config.campaign.training.checkpointEvery,
        ...(spec.init ? { init: await ctx.localFile(spec.init, { withCard: true }) } : {}),
        ...(spec.reference ? { reference: await ctx.localFile(spec.reference, { withCard: true }) } : {}),
        ...(spec.critic ? { critic: await ctx.localFile(spec.critic, { withCard: true }) } : {}),
        // Cards name models by storage key, never by this host's paths.
        modelRefs: { ...(spec.init ? { init: spec.init } : {}), ...(spec.reference ? { reference: spec.reference } : {}), ...(spec.critic ? { critic: spec.critic } : {}) },
      };
      // Checkpoint uploads are chained so they land in order; the last one is awaited before returning.
      let uploads = Promise.resolve();
      let latest: object = { model: spec.name, phase: 'preparing', step: 0, totalSteps: 0 };
      const result = await withHeartbeats(
        () => latest,
        runTrainingInWorker(job, {
          signal: Context.current().cancellationSignal,
          onProgress: (progress) => {
            latest = { model: spec.name, ...progress };
            Context.current().heartbeat(latest);
          },
          onCheckpoint: ({ path }) => {
            uploads = uploads.then(async () => void (await ctx.store.uploadFile(stateKey, path)));
          },
        }),
      );
      await uploads;
      if (result.status !== 'completed') throw new Error(`training of the ${spec.name} stopped at step ${result.step} of ${result.totalSteps}`);
      const objects = await ctx.uploadModel(job.outPath, key);
      return { objects, data: { key, steps: result.step, objects } };
    });
  }

  /**
   * One training job in an external command: data and models staged from the store (files or
   * directory checkpoints), `{out}` stored as a checkpoint at the key the embedded trainer would write
   * (a directory goes file by file under `key/`, with its listing beside it). A
   * non-zero exit fails the activity with the trainer's last log lines.
   */
  async function trainExternally(
    spec: TrainSpec,
    key: string,
    trainer: Extract<Config['models']['trainer'], { backend: 'external' }>,
    batchSize: number,
  ): Promise<{ objects: ObjectInfo[]; data: { key: string; steps: number; objects: ObjectInfo[] } }> {
    // With a completions actor the trainer reads training records (prompt and response text), written
    // beside the experience by filterExperience; other datasets go as they are.
    const config = await ctx.config(spec.scope);
    const records = trainingRecordsKey(spec.data.key);
    const useRecords = config.models.actor.backend === 'completions' && (await ctx.store.exists(records));
    const inputs: Record<string, string> = { data: useRecords ? records : spec.data.key };
    if (spec.init) inputs.init = spec.init;
    if (spec.reference) inputs.reference = spec.reference;
    if (spec.critic) inputs.critic = spec.critic;
    let latest: object = { model: spec.name, phase: 'external', fraction: 0 };
    const result = await withHeartbeats(
      () => latest,
      runExternalTrainer({
        command: trainer.command,
        inputs,
        // One template for every job: a job without an init, reference or critic leaves that option out.
        optional: ['init', 'reference', 'critic'],
        outputs: { out: key },
        // Kept across attempts (keyed by the output), so a retried job resumes from its step checkpoints.
        workDir: join(ctx.localRoot('training'), 'external', key),
        store: ctx.store,
        // What the embedded trainer gets as a job, as variables (the command template holds only paths).
        env: {
          ...trainerVariables({
            model: spec.name,
            objective: spec.objective,
            epochs: spec.epochs,
            batchSize,
            seed: spec.scope.seed,
            dataFormat: useRecords ? 'training-records' : 'examples',
            recordSchemaVersion: TRAINING_RECORD_SCHEMA_VERSION,
            // The actor is served by vLLM's runtime LoRA loading: the trainer refuses, before training, an adapter it would refuse.
            ...(spec.name === 'actor' && config.models.serving.backend === 'vllm-lora' ? { maxLoraRank: config.models.serving.maxLoraRank } : {}),
            // How the records' prompts were written (the trainer closes each response with that format's
            // end of turn), and a configured context as the trainer's max length too.
            ...promptVariables(config.models.actor),
          }),
          ...objectiveEnvironment(spec.objective, config.campaign.training),
        },
        ...(trainer.cwd ? { cwd: trainer.cwd } : {}),
        ...(trainer.timeoutSeconds ? { timeoutMs: trainer.timeoutSeconds * 1000 } : {}),
        signal: Context.current().cancellationSignal,
        onProgress: (fraction) => {
          latest = { model: spec.name, phase: 'external', fraction };
          Context.current().heartbeat(latest);
        },
      }),
    );
    // The manifest lists what was uploaded, with the digests the upload computed.
    const objects = result.uploaded.out ?? [];
    await ctx.store.putJson(`${key}.trainer-log.json`, { command: trainer.command, logTail: result.logTail });
    // An external trainer reports no step count; 0 says so rather than inventing one.
    return { objects, data: { key, steps: 0, objects } };
  }

  /**
   * A completions actor's phase-0 data as training records beside the datasets (activities/campaign/
   * phaseZeroData.ts), which the external trainer then reads; and the key of its init checkpoint.
   */
  async function completionsSftData(scope: PhaseScope & Demonstrations, actor: Extract<Config['models']['actor'], { backend: 'completions' }>): Promise<{ actorPairs: number; key: string | undefined }> {
    const prompts = actorPrompts(actor, loadModelSecrets(), Context.current().cancellationSignal);
    const actorRecords = await actorSftRecords(scope.campaignId, actor, prompts, ctx.store, await ctx.readDataset(scope.demonstrations));
    if (actorRecords.length) await ctx.writeDataset(trainingRecordsKey(scope.demonstrations.key), actorRecords);
    await ctx.writeDataset(trainingRecordsKey(scope.criticExamples.key), await criticSftRecords(scope.campaignId, prompts, await ctx.readDataset(scope.criticExamples)));
    return { actorPairs: actorRecords.length, key: await actorInitKey(actor, ctx.store, ctx.key(scope, 'checkpoints', 'actor-init')) };
  }

  async function records(shards: DatasetRef[]): Promise<TrajectoryRecord[]> {
    const rows = (await Promise.all(shards.map((shard) => ctx.readDataset<TrajectoryIndexRow>(shard)))).flat();
    return Promise.all(rows.map((row) => ctx.store.getJson<TrajectoryRecord>(row.trajectoryKey)));
  }

  return {
    async trainSft(input) {
      return ctx.once(ctx.key(input, 'checkpoints', 'sft'), async () => {
        const config = await ctx.config(input);
        const { training } = config.campaign;
        const init = config.models.actor.backend === 'completions' ? await completionsSftData(input, config.models.actor) : undefined;
        // A completions actor with no SFT pairs at all (no oracle, no file) starts the campaign from its init checkpoint as it is.
        const actor = init?.actorPairs === 0 && init.key
          ? { key: init.key, steps: 0, objects: [] as ObjectInfo[] }
          : await trainModel({ scope: input, name: 'actor', objective: 'actor-sft', data: input.demonstrations, epochs: training.sftEpochs, ...(init?.key ? { init: init.key } : {}) });
        const critic = await trainModel({ scope: input, name: 'critic', objective: 'critic', data: input.criticExamples, epochs: training.sftEpochs });
        const orm = await trainModel({ scope: input, name: 'orm', objective: 'orm', data: input.ormExamples, epochs: training.ormEpochs });
        const objects = [...actor.objects, ...critic.objects, ...orm.objects];
        return { objects, data: { models: { actor: actor.key, critic: critic.key, orm: orm.key }, steps: actor.steps + critic.steps + orm.steps } };
      });
    },

    async fitOrmAndCriticToProbe(input) {
      return ctx.once(ctx.key(input, 'checkpoints', 'probe-fit'), async () => {
        const config = await ctx.config(input);
        const { training } = config.campaign;
        // Only the evaluators' labels are used: a task without an evaluator says nothing here.
        const graded = (await records(input.shards)).filter((record) => record.graded && record.rounds.length > 0);
        const fitOrm = config.models.orm.backend === 'embedded' && graded.length > 0;
        const fitCritic = config.models.critic.backend === 'embedded' && graded.length > 0;
        let orm = { key: input.orm, steps: 0, objects: [] as ObjectInfo[] };
        let critic = { key: input.critic, steps: 0, objects: [] as ObjectInfo[] };
        const datasets: DatasetRef[] = [];
        if (fitOrm) {
          const data = await ctx.writeDataset(ctx.key(input, 'probe-fit', 'orm.jsonl'), [...(await ctx.readDataset(input.ormExamples)), ...ormExamplesOf(graded)]);
          datasets.push(data);
          orm = await trainModel({ scope: input, name: 'orm', file: 'orm-probe-fit', objective: 'orm', data, epochs: training.ormEpochs });
        }
        if (fitCritic) {
          const data = await ctx.writeDataset(ctx.key(input, 'probe-fit', 'critic.jsonl'), [...(await ctx.readDataset(input.criticExamples)), ...criticExamplesOf(graded)]);
          datasets.push(data);
          critic = await trainModel({ scope: input, name: 'critic', file: 'critic-probe-fit', objective: 'critic', data, epochs: training.sftEpochs });
        }
        const objects = [
          ...(await ctx.datasetObjects(...datasets)),
          ...orm.objects,
          ...critic.objects,
        ];
        return { objects, data: { orm: orm.key, critic: critic.key, steps: orm.steps + critic.steps, outcomes: graded.length } };
      });
    },

    async scoreWithOrm(input) {
      return ctx.once(ctx.key(input, 'rewards'), async () => {
        const config = await ctx.config(input);
        const remote = remoteOrm(config.models, loadModelSecrets(), Context.current().cancellationSignal);
        const rows = (await Promise.all(input.shards.map((shard) => ctx.readDataset<TrajectoryIndexRow>(shard)))).flat();
        const all = await records(input.shards);
        const states = all.map((record) => outcomeState(record.intent, record.rounds));
        const judgeable = states.flatMap((state, i) => (state ? [{ id: rows[i]!.trajectoryKey, state }] : []));
        let scored: ({ pYes: number; reward: number } | null)[];
        let failures: BackendFailure[] = [];
        if (remote && config.models.orm.backend === 'chat') {
          // A trajectory the remote ORM gave no usable verdict for gets reward 0, and the failure is kept.
          ({ verdicts: scored, failures } = await withHeartbeats(() => ({ judging: judgeable.length }), judgeEach(remote, judgeable, config.models.orm.concurrency)));
        } else {
          const orm = await models.orm(input.orm);
          scored = await orm.judge(judgeable.map((item) => item.state));
        }
        let next = 0;
        const rewards: RewardRow[] = all.map((record, i) => {
          // A trajectory with no step (the start page failed to load) cannot be judged: reward 0.
          const verdict = (states[i] ? scored[next++] : null) ?? { pYes: 0, reward: 0 };
          const row = { taskId: record.taskId, site: record.site, trajectoryKey: rows[i]!.trajectoryKey, pYes: verdict.pYes, score: record.score, graded: record.graded };
          // The ORM still judges what the evaluator rewards, so its accuracy stays measured.
          if (config.campaign.reward === 'evaluator' && record.graded) return { ...row, reward: record.score >= 1 ? 1 : 0, rewardFrom: 'evaluator' };
          return { ...row, reward: verdict.reward, rewardFrom: 'orm' };
        });
        const ref = await ctx.writeDataset(ctx.key(input, 'rewards.jsonl'), rewards);
        if (failures.length) await ctx.store.putJson(ctx.key(input, 'rewards-failures.json'), failures);
        const successes = rewards.filter((r) => r.reward === 1).length;
        return { objects: await ctx.datasetObjects(ref), data: { rewards: ref, successes } };
      });
    },

    async filterExperience(input) {
      return ctx.once(ctx.key(input, 'experience'), async () => {
        const rewards = await ctx.readDataset<RewardRow>(input.rewards);
        const tasks = new Map((await ctx.readDataset<EnvironmentTask>(input.tasks)).map((t) => [String(t.task_id), t]));
        const current: ExperienceRow[] = [];
        const successes: ExperienceRow[] = [];
        const failed: EnvironmentTask[] = [];
        for (const reward of rewards) {
          const record = await ctx.store.getJson<TrajectoryRecord>(reward.trajectoryKey);
          const steps = record.rounds.map((round, t): ExperienceRow => ({
            taskId: record.taskId,
            state: round.state,
            response: round.response,
            nextState: record.rounds[t + 1]?.state ?? null,
            reward: t === record.rounds.length - 1 ? reward.reward : 0,
            mcReturn: monteCarloReturn(reward.reward, t, record.rounds.length),
            traceId: record.traceKey,
            step: t,
            steps: record.rounds.length,
            trajectoryReward: reward.reward,
          }));
          current.push(...steps);
          if (reward.reward === 1) successes.push(...steps);
          else if (tasks.has(reward.taskId)) failed.push(tasks.get(reward.taskId)!);
        }

        // Replay: earlier phases' successes, kept where the current actor finds them neither mastered
        // nor alien (rank = exp(mean token log-prob) in the band), at most `cap` x this phase's steps.
        const buffer = input.replayBuffer ? await ctx.readDataset<ExperienceRow>(input.replayBuffer) : [];
        const config = await ctx.config(input);
        // The actor the phase trains from, as served (also the KL reference of the records' log-probs).
        const secrets = loadModelSecrets();
        const scorer = remoteActorScorer(config.models, secrets, Context.current().cancellationSignal, await servedActor(ctx, config.models.serving, input.actor));
        let logProbs: (ActionLogProb | null)[];
        let currentLogProbs: (ActionLogProb | null)[] | undefined;
        if (scorer && config.models.actor.backend === 'completions') {
          // A step the server cannot score is left out of this phase's replay, or has null log-probs in
          // its training record (and is recorded).
          const items = [...buffer, ...current].map((row, i) => ({ id: `${row.taskId}#${i}`, state: row.state, response: row.response }));
          const scored = await withHeartbeats(() => ({ scoring: items.length }), logProbsEach(scorer, items, config.models.actor.concurrency));
          logProbs = scored.logProbs.slice(0, buffer.length);
          currentLogProbs = scored.logProbs.slice(buffer.length);
          if (scored.failures.length) await ctx.store.putJson(ctx.key(input, 'replay-logprob-failures.json'), scored.failures);
        } else {
          const actor = await models.actor(input.actor);
          logProbs = await actor.logProbs(buffer.map((row) => ({ state: row.state, response: row.response })));
        }
        const [low, high] = input.rankBand;
        const inBandIndices = buffer.flatMap((_, i) => {
          const scored = logProbs[i];
          if (!scored) return [];
          const rank = Math.exp(scored.meanTokenLogProb);
          return rank > low && rank <= high ? [i] : [];
        });
        const replayedIndices = new Rng(input.seed).fork(`replay-${input.phase}`).sample(inBandIndices, Math.floor(input.cap * current.length));
        const replayed = replayedIndices.map((i) => buffer[i]!);

        // The buffer keeps one successful trajectory per task.
        const known = new Set(buffer.map((row) => row.taskId));
        const added = successes.filter((row) => !known.has(row.taskId));
        const experience = await ctx.writeDataset(ctx.key(input, 'experience.jsonl'), [...current, ...replayed]);
        const replayBuffer = await ctx.writeDataset(ctx.key(input, 'replay-buffer.jsonl'), [...buffer, ...added]);
        const failedTasks = await ctx.writeDataset(ctx.key(input, 'failed-tasks.jsonl'), failed);
        const written = [experience, replayBuffer, failedTasks];
        const prompts = remotePrompts(config.models, secrets, Context.current().cancellationSignal);
        if (currentLogProbs && prompts) {
          // The records an external trainer reads, beside the experience: the same rows in the same order.
          const scope = { campaignId: input.campaignId, phase: input.phase, gamma: config.campaign.training.gamma, prompts };
          written.push(
            await ctx.writeDataset(trainingRecordsKey(experience.key), [
              ...(await Promise.all(current.map((row, i) => stepRecordOf(row, 'rollout', currentLogProbs[i] ?? null, scope)))),
              ...(await Promise.all(replayedIndices.map((i) => stepRecordOf(buffer[i]!, 'replay', logProbs[i] ?? null, scope)))),
            ]),
          );
        }
        return {
          objects: await ctx.datasetObjects(...written),
          data: { experience, replayBuffer, failedTasks, replayedSteps: replayed.length, currentSteps: current.length },
        };
      });
    },

    async trainCritic(input) {
      // A phase without experience (nothing kept, nothing rolled out) leaves the models as they were.
      if (input.experience.count === 0) return { critic: input.critic, steps: 0 };
      const config = await ctx.config(input);
      const { key, steps } = await trainModel({
        scope: input,
        name: 'critic',
        objective: 'critic',
        data: input.experience,
        epochs: config.campaign.training.criticEpochs,
        init: input.critic,
      });
      return { critic: key, steps };
    },

    async trainActor(input) {
      if (input.experience.count === 0) return { actor: input.actor, steps: 0 };
      const config = await ctx.config(input);
      const { key, steps } = await trainModel({
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
    },
  };
}

/** The completions actor's prompt settings an external trainer is told (none for the embedded actor). */
function promptVariables(actor: Config['models']['actor']): { promptFormat?: string; maxLength?: number } {
  if (actor.backend !== 'completions') return {};
  return { promptFormat: actor.promptFormat, ...(typeof actor.contextTokens === 'number' ? { maxLength: actor.contextTokens } : {}) };
}
