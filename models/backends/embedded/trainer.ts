/**
 * The embedded trainer: ONNX training in a worker thread of this process. A retried job resumes from its
 * uploaded step state.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { StorageNotFoundError } from '../../../storage/errors';
import type { ObjectInfo } from '../../../storage/artifactStore';
import { runTrainingInWorker } from '../../train/runTraining';
import type { TrainingJob, TrainingResult } from '../../train/trainer';
import type { TrainerMetrics } from '../../train/trainerMetrics';
import type { RoleDeps } from '../contract';
import type { Trainer, TrainingTarget, TrainSpec } from '../roles';

/**
 * Training in a worker thread of this process: data and models staged from the store, heartbeats,
 * each step checkpoint uploaded; a retry downloads the last one and resumes.
 */
export function embeddedTrainer({ storage, heartbeats, signal }: RoleDeps): Trainer {
  return {
    async train(spec, target) {
      // Heartbeats from the first download to the last upload: staging and uploading a model under a
      // busy host can take longer than the heartbeat timeout, which would cancel a healthy job.
      const latest = { details: { model: spec.name, phase: 'preparing', step: 0, totalSteps: 0 } as object };
      return heartbeats.withHeartbeats(() => latest.details, trainHere(spec, target, latest));
    },
  };

  async function trainHere(
    spec: TrainSpec,
    { key, stateKey, training }: TrainingTarget,
    latest: { details: object },
  ): Promise<{ steps: number; objects: ObjectInfo[]; metrics: TrainerMetrics | null }> {
    const dir = join(storage.localRoot('training'), spec.scope.campaignId, `phase-${spec.scope.phase}`, spec.file ?? spec.name);
    await mkdir(dir, { recursive: true });
    const learningRate = training.learningRates[spec.objective];
    const dataPath = join(dir, 'data.jsonl');
    await storage.store.downloadFile(spec.data.key, dataPath);
    const statePath = join(dir, 'model.onnx.state');
    let resume = false;
    try {
      await storage.store.downloadFile(stateKey, statePath);
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
      ...(spec.init ? { init: await storage.localFile(spec.init, { withCard: true }) } : {}),
      ...(spec.reference ? { reference: await storage.localFile(spec.reference, { withCard: true }) } : {}),
      ...(spec.critic ? { critic: await storage.localFile(spec.critic, { withCard: true }) } : {}),
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
      signal: signal(),
      onProgress: (progress) => {
        latest.details = { model: spec.name, ...progress };
        heartbeats.beatNow();
      },
      onCheckpoint: ({ path }) => {
        uploads = uploads.then(async () => void (await storage.store.uploadFile(stateKey, path)));
      },
    });
    await uploads;
    if (result.status !== 'completed') throw new Error(`training of the ${spec.name} stopped at step ${result.step} of ${result.totalSteps}`);
    latest.details = { model: spec.name, phase: 'uploading', step: result.step, totalSteps: result.totalSteps };
    return { steps: result.step, objects: await storage.uploadModel(job.outPath, key), metrics: embeddedMetrics(spec.objective, result) };
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
