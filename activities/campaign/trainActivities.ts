/**
 * Activities of the train task queue: ORM scoring, experience filtering (replay buffer with the
 * perplexity band), and training (SFT; critic, then the KL-constrained actor). Training runs in a worker
 * thread; each training checkpoint is uploaded, so a job killed midway resumes from it on any host.
 */
import { Context } from '@temporalio/activity';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { WebArenaTask } from '../../env/tasks/schema';
import { Rng } from '../../env/random';
import type { Objective } from '../../models/train/examples';
import { runTrainingInWorker } from '../../models/train/runTraining';
import type { TrainingJob } from '../../models/train/trainer';
import type { ModelState } from '../../models/state';
import { StorageNotFoundError } from '../../storage/errors';
import type { DatasetRef, PhaseScope } from '../../workflows/campaignTypes';
import type { CampaignActivities } from './contract';
import { datasetObject, withHeartbeats, type CampaignContext } from './context';
import type { ObjectInfo } from '../../storage/artifactStore';
import type { TrajectoryIndexRow, TrajectoryRecord } from './episodes';
import { finalState, monteCarloReturn, type ModelCache } from './models';

type TrainActivities = Pick<
  CampaignActivities,
  'trainSft' | 'scoreWithOrm' | 'filterExperience' | 'trainCritic' | 'trainActor'
>;

export interface RewardRow {
  taskId: string;
  site: string;
  trajectoryKey: string;
  reward: number;
  pYes: number;
  /** The evaluator's score, kept to measure the ORM; never used for training. */
  score: number;
}

export interface ExperienceRow {
  taskId: string;
  state: ModelState;
  response: string;
  nextState: ModelState | null;
  reward: number;
  mcReturn: number;
}

interface TrainSpec {
  scope: PhaseScope;
  name: 'actor' | 'critic' | 'orm';
  objective: Objective;
  data: DatasetRef;
  epochs: number;
  init?: string;
  reference?: string;
  critic?: string;
}

export function createTrainActivities(deps: { ctx: CampaignContext; models: ModelCache }): TrainActivities {
  const { ctx, models } = deps;

  /**
   * One training job: data and models staged from the store, training in a worker thread with
   * heartbeats, each checkpoint uploaded; a retry downloads the last checkpoint and resumes.
   */
  async function trainModel(spec: TrainSpec): Promise<{ key: string; steps: number; objects: ObjectInfo[] }> {
    const key = ctx.key(spec.scope, 'checkpoints', `${spec.name}.onnx`);
    const stateKey = ctx.key(spec.scope, 'checkpoints', `${spec.name}.train-state`);
    return ctx.once(key, async () => {
      const config = await ctx.config(spec.scope.configKey);
      const dir = join(ctx.workDir, 'training', spec.scope.campaignId, `phase-${spec.scope.phase}`, spec.name);
      await mkdir(dir, { recursive: true });
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
        batchSize: config.campaign.training.batchSize,
        checkpointEvery: config.campaign.training.checkpointEvery,
        ...(spec.init ? { init: await ctx.localFile(spec.init, { withCard: true }) } : {}),
        ...(spec.reference ? { reference: await ctx.localFile(spec.reference, { withCard: true }) } : {}),
        ...(spec.critic ? { critic: await ctx.localFile(spec.critic, { withCard: true }) } : {}),
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

  async function records(shards: DatasetRef[]): Promise<TrajectoryRecord[]> {
    const rows = (await Promise.all(shards.map((shard) => ctx.readDataset<TrajectoryIndexRow>(shard)))).flat();
    return Promise.all(rows.map((row) => ctx.store.getJson<TrajectoryRecord>(row.trajectoryKey)));
  }

  return {
    async trainSft(input) {
      return ctx.once(ctx.key(input, 'checkpoints', 'sft'), async () => {
        const config = await ctx.config(input.configKey);
        const { training } = config.campaign;
        const actor = await trainModel({ scope: input, name: 'actor', objective: 'actor-sft', data: input.demonstrations, epochs: training.sftEpochs });
        const critic = await trainModel({ scope: input, name: 'critic', objective: 'critic', data: input.criticExamples, epochs: training.sftEpochs });
        const orm = await trainModel({ scope: input, name: 'orm', objective: 'orm', data: input.ormExamples, epochs: training.ormEpochs });
        const objects = [...actor.objects, ...critic.objects, ...orm.objects];
        return { objects, data: { models: { actor: actor.key, critic: critic.key, orm: orm.key }, steps: actor.steps + critic.steps + orm.steps } };
      });
    },

    async scoreWithOrm(input) {
      return ctx.once(ctx.key(input, 'rewards'), async () => {
        const orm = await models.orm(input.orm);
        const rows = (await Promise.all(input.shards.map((shard) => ctx.readDataset<TrajectoryIndexRow>(shard)))).flat();
        const all = await records(input.shards);
        const states = all.map((record) => finalState(record));
        const scored = await orm.judge(states.filter((s): s is ModelState => s !== null));
        let next = 0;
        const rewards: RewardRow[] = all.map((record, i) => {
          // A trajectory with no step (the start page failed to load) cannot be judged: reward 0.
          const verdict = states[i] ? scored[next++]! : { pYes: 0, reward: 0 };
          return { taskId: record.taskId, site: record.site, trajectoryKey: rows[i]!.trajectoryKey, reward: verdict.reward, pYes: verdict.pYes, score: record.score };
        });
        const ref = await ctx.writeDataset(ctx.key(input, 'rewards.jsonl'), rewards);
        const successes = rewards.filter((r) => r.reward === 1).length;
        return { objects: [datasetObject(ref, (await ctx.store.head(ref.key)).bytes)], data: { rewards: ref, successes } };
      });
    },

    async filterExperience(input) {
      return ctx.once(ctx.key(input, 'experience'), async () => {
        const rewards = await ctx.readDataset<RewardRow>(input.rewards);
        const tasks = new Map((await ctx.readDataset<WebArenaTask>(input.tasks)).map((t) => [String(t.task_id), t]));
        const current: ExperienceRow[] = [];
        const successes: ExperienceRow[] = [];
        const failed: WebArenaTask[] = [];
        for (const reward of rewards) {
          const record = await ctx.store.getJson<TrajectoryRecord>(reward.trajectoryKey);
          const steps = record.rounds.map((round, t): ExperienceRow => ({
            taskId: record.taskId,
            state: round.state,
            response: round.response,
            nextState: record.rounds[t + 1]?.state ?? null,
            reward: t === record.rounds.length - 1 ? reward.reward : 0,
            mcReturn: monteCarloReturn(reward.reward, t, record.rounds.length),
          }));
          current.push(...steps);
          if (reward.reward === 1) successes.push(...steps);
          else if (tasks.has(reward.taskId)) failed.push(tasks.get(reward.taskId)!);
        }

        // Replay: earlier phases' successes, kept where the current actor finds them neither mastered
        // nor alien (rank = exp(mean token log-prob) in the band), at most `cap` x this phase's steps.
        const buffer = input.replayBuffer ? await ctx.readDataset<ExperienceRow>(input.replayBuffer) : [];
        const actor = await models.actor(input.actor);
        const logProbs = await actor.logProbs(buffer.map((row) => ({ state: row.state, response: row.response })));
        const [low, high] = input.rankBand;
        const inBand = buffer.filter((_, i) => {
          const rank = Math.exp(logProbs[i]!.meanTokenLogProb);
          return rank > low && rank <= high;
        });
        const replayed = new Rng(input.seed).fork(`replay-${input.phase}`).sample(inBand, Math.floor(input.cap * current.length));

        // The buffer keeps one successful trajectory per task.
        const known = new Set(buffer.map((row) => row.taskId));
        const added = successes.filter((row) => !known.has(row.taskId));
        const experience = await ctx.writeDataset(ctx.key(input, 'experience.jsonl'), [...current, ...replayed]);
        const replayBuffer = await ctx.writeDataset(ctx.key(input, 'replay-buffer.jsonl'), [...buffer, ...added]);
        const failedTasks = await ctx.writeDataset(ctx.key(input, 'failed-tasks.jsonl'), failed);
        const objects = await Promise.all(
          [experience, replayBuffer, failedTasks].map(async (ref) => datasetObject(ref, (await ctx.store.head(ref.key)).bytes)),
        );
        return {
          objects,
          data: { experience, replayBuffer, failedTasks, replayedSteps: replayed.length, currentSteps: current.length },
        };
      });
    },

    async trainCritic(input) {
      const config = await ctx.config(input.configKey);
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
      const config = await ctx.config(input.configKey);
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
