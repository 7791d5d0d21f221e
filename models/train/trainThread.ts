/**
 * Worker-thread entry point of `runTrainingInWorker`: runs one job and reports progress, checkpoints and
 * the result (or the error) to the parent as messages. The heavy compute lives here so the parent (a
 * Temporal activity) keeps its event loop free to heartbeat.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { train, type TrainingJob } from './trainer';
import type { WorkerMessage } from './runTraining';

function post(message: WorkerMessage): void {
  parentPort?.postMessage(message);
}

train(workerData as TrainingJob, {
  onProgress: (progress) => post({ type: 'progress', progress }),
  onCheckpoint: (checkpoint) => post({ type: 'checkpoint', checkpoint }),
}).then(
  (result) => post({ type: 'done', result }),
  (error: unknown) => post({ type: 'error', message: error instanceof Error ? error.message : String(error) }),
);
