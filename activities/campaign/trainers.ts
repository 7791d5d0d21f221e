/**
 * The two trainers: the embedded one (ONNX training in a worker thread) and an external command (the
 * torch trainer, or the user's). Both resume a retried job: the embedded one from its uploaded step
 * state, the external one from its work directory, kept across attempts.
 */
import { Context } from '@temporalio/activity';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { z } from 'zod';
import type { settings as external } from '../../models/backends/external/settings';
import type { Config } from '../../config/campaignConfig';
import { runExternalTrainer } from '../../models/remote/externalTrainer';
import { objectiveEnvironment } from '../../models/remote/trainerEnvironment';
import { timeLeftEstimator } from '../../models/remote/trainerProgress';
import { runTrainingInWorker } from '../../models/train/runTraining';
import type { TrainingJob, TrainingResult } from '../../models/train/trainer';
import { parseTrainerMetrics, TRAINER_METRICS_FILE, type TrainerMetrics } from '../../models/train/trainerMetrics';
import { trainerVariables } from '../../models/train/trainerContract';
import { TRAINING_RECORD_SCHEMA_VERSION, trainingRecordsKey } from '../../models/train/trainingRecord';
import type { PromptFormatName } from '../../browser/policies/promptFormatNames';
import { StorageNotFoundError } from '../../storage/errors';
import type { CampaignContext } from './context';
import { beatNow, withHeartbeats } from '../heartbeats';
import type { ObjectInfo } from '../../storage/artifactStore';
import type { Trainer, TrainingTarget, TrainSpec } from './roles';

/**
 * Training in a worker thread of this process: data and models staged from the store, heartbeats,
 * each step checkpoint uploaded; a retry downloads the last one and resumes.
 */
export function embeddedTrainer(ctx: CampaignContext): Trainer {
  return {
    async train(spec, target) {
      // Heartbeats from the first download to the last upload: staging and uploading a model under a
      // busy host can take longer than the heartbeat timeout, which would cancel a healthy job.
      const latest = { details: { model: spec.name, phase: 'preparing', step: 0, totalSteps: 0 } as object };
      return withHeartbeats(() => latest.details, trainHere(spec, target, latest));
    },
  };

  async function trainHere(
    spec: TrainSpec,
    { key, stateKey, training }: TrainingTarget,
    latest: { details: object },
  ): Promise<{ steps: number; objects: ObjectInfo[]; metrics: TrainerMetrics | null }> {
    const dir = join(ctx.localRoot('training'), spec.scope.campaignId, `phase-${spec.scope.phase}`, spec.file ?? spec.name);
    await mkdir(dir, { recursive: true });
    const learningRate = training.learningRates[spec.objective];
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
      batchSize: training.batchSize,
      checkpointEvery: training.checkpointEvery,
      ...(spec.init ? { init: await ctx.localFile(spec.init, { withCard: true }) } : {}),
      ...(spec.reference ? { reference: await ctx.localFile(spec.reference, { withCard: true }) } : {}),
      ...(spec.critic ? { critic: await ctx.localFile(spec.critic, { withCard: true }) } : {}),
      // Cards name models by storage key, never by this host's paths.
      modelRefs: {
        ...(spec.init ? { init: spec.init } : {}),
        ...(spec.reference ? { reference: spec.reference } : {}),
        ...(spec.critic ? { critic: spec.critic } : {}),
      },
    };
    // Checkpoint uploads are chained so they land in order; the last one is awaited before returning.
    let uploads = Promise.resolve();
    const result = await runTrainingInWorker(job, {
      signal: Context.current().cancellationSignal,
      onProgress: (progress) => {
        latest.details = { model: spec.name, ...progress };
        beatNow();
      },
      onCheckpoint: ({ path }) => {
        uploads = uploads.then(async () => void (await ctx.store.uploadFile(stateKey, path)));
      },
    });
    await uploads;
    if (result.status !== 'completed') throw new Error(`training of the ${spec.name} stopped at step ${result.step} of ${result.totalSteps}`);
    latest.details = { model: spec.name, phase: 'uploading', step: result.step, totalSteps: result.totalSteps };
    return { steps: result.step, objects: await ctx.uploadModel(job.outPath, key), metrics: embeddedMetrics(spec.objective, result) };
  }
}

/**
 * What the embedded trainer can tell: its rows and optimizer steps. It steps on every batch (skipped: not
 * told), and its rows carry no source nor tokens, so positive rows by source and KL per token are n/a.
 */
function embeddedMetrics(objective: TrainSpec['objective'], result: TrainingResult): TrainerMetrics {
  const rows = result.metrics.examples ?? 0;
  return { objective, rows, optimizerSteps: result.step, skippedSteps: null, positiveRows: null, klPerToken: null };
}

/** What an external trainer is told of the actor it trains. */
export interface ExternalActorJob {
  trainsFromRecords: boolean;
  /** The serving vLLM's --max-lora-rank, when adapters are loaded at run time. */
  maxLoraRank: number | undefined;
  /** A completions actor's prompt format (WEBRL_TRAIN_PROMPT_FORMAT). */
  promptFormat?: PromptFormatName;
  /** A configured context (WEBRL_TRAIN_MAX_LENGTH); unset, the trainer reads the model's. */
  maxLength?: number;
}

/**
 * Training in an external command: data and models staged from the store (files or directory
 * checkpoints), `{out}` stored as a checkpoint at the key the embedded trainer would write (a directory
 * goes file by file under `key/`, with its listing beside it). A non-zero exit fails the activity with
 * the trainer's last log lines.
 */
export function externalTrainer(ctx: CampaignContext, trainer: z.output<typeof external.trainer>, actor: ExternalActorJob): Trainer {
  return {
    async train(spec, { key, training }) {
      // An actor trained from text reads training records (prompt and response text), written beside
      // the experience by filterExperience; other datasets go as they are.
      const records = trainingRecordsKey(spec.data.key);
      const useRecords = actor.trainsFromRecords && (await ctx.store.exists(records));
      const inputs: Record<string, string> = { data: useRecords ? records : spec.data.key };
      if (spec.init) inputs.init = spec.init;
      if (spec.reference) inputs.reference = spec.reference;
      if (spec.critic) inputs.critic = spec.critic;
      // Steps done of the job's total and the time left, for the main job's live line.
      let latest: object = { model: spec.name, phase: 'external', fraction: 0 };
      const timeLeft = timeLeftEstimator();
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
              batchSize: training.batchSize,
              seed: spec.scope.seed,
              dataFormat: useRecords ? 'training-records' : 'examples',
              recordSchemaVersion: TRAINING_RECORD_SCHEMA_VERSION,
              // A server that loads adapters at run time: the trainer refuses, before training, an adapter it would refuse.
              ...(spec.name === 'actor' && actor.maxLoraRank !== undefined ? { maxLoraRank: actor.maxLoraRank } : {}),
              ...(actor.promptFormat !== undefined ? { promptFormat: actor.promptFormat } : {}),
              ...(actor.maxLength !== undefined ? { maxLength: actor.maxLength } : {}),
            }),
            ...objectiveEnvironment(spec.objective, training),
          },
          ...(trainer.cwd ? { cwd: trainer.cwd } : {}),
          ...(trainer.timeoutSeconds ? { timeoutMs: trainer.timeoutSeconds * 1000 } : {}),
          signal: Context.current().cancellationSignal,
          onProgress: (progress) => {
            const secondsLeft = timeLeft(progress.fraction);
            latest = { model: spec.name, phase: 'external', ...progress, ...(secondsLeft !== undefined ? { secondsLeft } : {}) };
            beatNow();
          },
        }),
      );
      await ctx.store.putJson(`${key}.trainer-log.json`, { command: trainer.command, logTail: result.logTail });
      // What the job did, when the trainer wrote it into {out} (webrl-torch does; another trainer may not).
      const written = `${key}/${TRAINER_METRICS_FILE}`;
      const { metrics, problem } = parseTrainerMetrics(await ctx.store.tryGetJson(written), written);
      if (problem) Context.current().log.warn(`the trainer's metrics are left out: ${problem}`);
      // The manifest lists what was uploaded, with the digests the upload computed; the step count is the
      // trainer's optimizer steps when it tells them, else 0 rather than an invented one.
      return { steps: metrics?.optimizerSteps ?? 0, objects: result.uploaded.out ?? [], metrics };
    },
  };
}
