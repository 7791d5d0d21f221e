/**
 * Runs workers for the given task queues in this process, all sharing one Temporal connection, one
 * artifact store and (per queue) the resources their activities need: the browser queue a Chromium
 * pool and the embedded sites; the train queue the model cache and training threads.
 */
import type { Worker } from '@temporalio/worker';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createArtifactActivities } from '../activities/artifactTransfer';
import { createBrowserActivities } from '../activities/campaign/browserActivities';
import { BrowserRuntime } from '../activities/campaign/browserRuntime';
import { CampaignContext } from '../activities/campaign/context';
import { createControlActivities } from '../activities/campaign/controlActivities';
import { ModelCache } from '../activities/campaign/models';
import { createTrainActivities } from '../activities/campaign/trainActivities';
import { createDeployActivities } from '../activities/campaign/deployActivities';
import type { Settings } from '../config/settings';
import { ArtifactStore } from '../storage/artifactStore';
import { connectWorker } from '../temporal/connection';
import { createWorker } from './factory';

export const WORKFLOWS_PATH = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));

export type QueueName = 'control' | 'browser' | 'train';
export const ALL_QUEUES: QueueName[] = ['control', 'browser', 'train'];

export async function runWorkers(settings: Settings, queues: QueueName[], signal?: AbortSignal): Promise<void> {
  const { config, secrets } = settings;
  const store = new ArtifactStore(config.s3, secrets.s3);
  await store.checkAccess();
  const ctx = new CampaignContext(store, join(resolve(config.stack.dataDir), 'work'));
  const models = new ModelCache(ctx);
  const runtime = queues.includes('browser') ? await BrowserRuntime.start(config) : undefined;
  const connection = await connectWorker(config, secrets);
  const workers: Worker[] = [];
  try {
    for (const queue of queues) {
      const taskQueue = config.temporal.taskQueues[queue];
      const activities =
        queue === 'control'
          ? { ...createArtifactActivities({ store }), ...createControlActivities({ ctx }) }
          : queue === 'browser'
            ? createBrowserActivities({ ctx, runtime: runtime!, models })
            : { ...createTrainActivities({ ctx, models }), ...createDeployActivities({ ctx }) };
      workers.push(
        await createWorker({
          connection,
          config,
          taskQueue,
          activities,
          ...(queue === 'control' ? { workflowsPath: WORKFLOWS_PATH } : {}),
        }),
      );
    }
    signal?.addEventListener('abort', () => workers.forEach((worker) => worker.shutdown()), { once: true });
    console.log(`worker polling task queues ${queues.map((q) => `'${config.temporal.taskQueues[q]}'`).join(', ')} on ${config.temporal.address}`);
    await Promise.all(workers.map((worker) => worker.run()));
  } finally {
    await connection.close();
    await runtime?.close();
    store.destroy();
  }
}
