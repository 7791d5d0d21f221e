/**
 * Runs a training job in a worker thread and relays its progress and checkpoints to callbacks on the
 * caller's thread (a Temporal activity heartbeats from them). Aborting the signal terminates the worker;
 * the last training-state file stays, so the job can be resumed (`resume: true`) where it was.
 */
import { Worker } from 'node:worker_threads';
import type { TrainingHooks, TrainingJob, TrainingProgress, TrainingResult } from './trainer';

export type WorkerMessage =
  | { type: 'progress'; progress: TrainingProgress }
  | { type: 'checkpoint'; checkpoint: { step: number; path: string } }
  | { type: 'done'; result: TrainingResult }
  | { type: 'error'; message: string };

export interface TrainingRunOptions extends TrainingHooks {
  signal?: AbortSignal;
}

export class TrainingAbortedError extends Error {
  override name = 'TrainingAbortedError';
}

/**
 * Starts trainThread.ts under tsx. `execArgv: ['--import', 'tsx']` does not register tsx's hooks before
 * a worker's entry module loads on Node 20, so a two-line bootstrap registers them and then imports it.
 */
function startTrainThread(job: TrainingJob): Worker {
  const tsxApi = import.meta.resolve('tsx/esm/api');
  const entry = new URL('./trainThread.ts', import.meta.url).href;
  const bootstrap = `import(${JSON.stringify(tsxApi)}).then(({ register }) => { register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(bootstrap, { eval: true, workerData: job });
}

export function runTrainingInWorker(job: TrainingJob, options: TrainingRunOptions = {}): Promise<TrainingResult> {
  return new Promise((resolve, reject) => {
    if (options.signal?.aborted) {
      reject(new TrainingAbortedError('training aborted before it started'));
      return;
    }
    const worker = startTrainThread(job);
    let settled = false;
    let lastStep = 0;
    const finish = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      options.signal?.removeEventListener('abort', onAbort);
      outcome();
    };
    const onAbort = () => {
      finish(() => reject(new TrainingAbortedError(`training aborted after step ${lastStep}; resume it from its training-state file`)));
      void worker.terminate();
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });
    worker.on('message', (message: WorkerMessage) => {
      if (settled) return;
      switch (message.type) {
        case 'progress':
          lastStep = message.progress.step;
          options.onProgress?.(message.progress);
          break;
        case 'checkpoint':
          options.onCheckpoint?.(message.checkpoint);
          break;
        case 'done':
          finish(() => resolve(message.result));
          break;
        case 'error':
          finish(() => reject(new Error(`training failed: ${message.message}`)));
          break;
      }
    });
    worker.on('error', (error) => finish(() => reject(new Error(`the training worker crashed: ${error.message}`, { cause: error }))));
    worker.on('exit', (code) => finish(() => reject(new Error(`the training worker exited (code ${code}) without a result`))));
  });
}
