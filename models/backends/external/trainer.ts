/**
 * The external trainer: a command (the torch trainer, or the user's) run per job. A retried job
 * resumes from its work directory, kept across attempts.
 */
import { Context } from '@temporalio/activity';
import { join } from 'node:path';
import type { z } from 'zod';
import type { PromptFormatName } from '../../../browser/policies/promptFormatNames';
import { runExternalTrainer } from '../../remote/externalTrainer';
import { objectiveEnvironment } from '../../remote/trainerEnvironment';
import { timeLeftEstimator } from '../../remote/trainerProgress';
import { trainerVariables } from '../../train/trainerContract';
import { parseTrainerMetrics, TRAINER_METRICS_FILE } from '../../train/trainerMetrics';
import { TRAINING_RECORD_SCHEMA_VERSION, trainingRecordsKey } from '../../train/trainingRecord';
import type { RoleDeps } from '../contract';
import type { Trainer } from '../roles';
import type { settings } from './settings';

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
export function externalTrainer({ storage, heartbeats, signal }: RoleDeps, trainer: z.output<typeof settings.trainer>, actor: ExternalActorJob): Trainer {
  return {
    async train(spec, { key, training }) {
      // An actor trained from text reads training records (prompt and response text), written beside
      // the experience by filterExperience; other datasets go as they are.
      const records = trainingRecordsKey(spec.data.key);
      const useRecords = actor.trainsFromRecords && (await storage.store.exists(records));
      const inputs: Record<string, string> = { data: useRecords ? records : spec.data.key };
      if (spec.init) inputs.init = spec.init;
      if (spec.reference) inputs.reference = spec.reference;
      if (spec.critic) inputs.critic = spec.critic;
      // Steps done of the job's total and the time left, for the main job's live line.
      let latest: object = { model: spec.name, phase: 'external', fraction: 0 };
      const timeLeft = timeLeftEstimator();
      const result = await heartbeats.withHeartbeats(
        () => latest,
        runExternalTrainer({
          command: trainer.command,
          inputs,
          // One template for every job: a job without an init, reference or critic leaves that option out.
          optional: ['init', 'reference', 'critic'],
          outputs: { out: key },
          // Kept across attempts (keyed by the output), so a retried job resumes from its step checkpoints.
          workDir: join(storage.localRoot('training'), 'external', key),
          store: storage.store,
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
          signal: signal(),
          onProgress: (progress) => {
            const secondsLeft = timeLeft(progress.fraction);
            latest = { model: spec.name, phase: 'external', ...progress, ...(secondsLeft !== undefined ? { secondsLeft } : {}) };
            heartbeats.beatNow();
          },
        }),
      );
      await storage.store.putJson(`${key}.trainer-log.json`, { command: trainer.command, logTail: result.logTail });
      // What the job did, when the trainer wrote it into {out} (webrl-torch does; another trainer may not).
      const written = `${key}/${TRAINER_METRICS_FILE}`;
      const { metrics, problem } = parseTrainerMetrics(await storage.store.tryGetJson(written), written);
      if (problem) Context.current().log.warn(`the trainer's metrics are left out: ${problem}`);
      // The manifest lists what was uploaded, with the digests the upload computed; the step count is the
      // trainer's optimizer steps when it tells them, else 0 rather than an invented one.
      return { steps: metrics?.optimizerSteps ?? 0, objects: result.uploaded.out ?? [], metrics };
    },
  };
}
