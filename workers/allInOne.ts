/**
 * The one-machine worker: every task queue in one process, against the configured Temporal and S3.
 * Run as `webrl worker` or `node --import tsx workers/allInOne.ts [campaign-file]`.
 */
import { fileURLToPath } from 'node:url';
import { createArtifactActivities } from '../activities/artifactTransfer';
import { loadSettings, type Settings } from '../config/settings';
import { ArtifactStore } from '../storage/artifactStore';
import { connectWorker } from '../temporal/connection';
import { createWorker } from './factory';

export const WORKFLOWS_PATH = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));

export async function runAllInOneWorker(settings: Settings, signal?: AbortSignal): Promise<void> {
  const { config, secrets } = settings;
  const store = new ArtifactStore(config.s3, secrets.s3);
  await store.checkAccess();
  const connection = await connectWorker(config, secrets);
  try {
    const control = await createWorker({
      connection,
      config,
      taskQueue: config.temporal.taskQueues.control,
      workflowsPath: WORKFLOWS_PATH,
      activities: createArtifactActivities({ store }),
    });
    signal?.addEventListener('abort', () => control.shutdown(), { once: true });
    console.log(`worker polling task queue '${config.temporal.taskQueues.control}' on ${config.temporal.address}`);
    await control.run();
  } finally {
    await connection.close();
    store.destroy();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const settings = await loadSettings(process.argv[2]);
  await runAllInOneWorker(settings);
}
