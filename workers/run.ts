/**
 * Runs workers for the given task queues in this process, all sharing one Temporal connection, one
 * artifact store, the model roles resolved from each campaign's config, and (per queue) the resources
 * their activities need: the browser queue a Chromium pool and the embedded sites.
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
import { createRoleResolver } from '../activities/campaign/backends';
import type { RolesFor } from '../activities/campaign/backends';
import { createTrainActivities } from '../activities/campaign/trainActivities';
import { createDeployActivities } from '../activities/campaign/deployActivities';
import type { QueueActivities } from '../activities/campaign/contract';
import type { Settings } from '../infra/settings';
import { loadModelSecrets } from '../config/secrets';
import { ArtifactStore } from '../storage/artifactStore';
import { keepRunning, type OutageWatch } from '../infra/outage';
import { portIsFree, StackError } from '../infra/processes';
import { connectWorker } from '../temporal/connection';
import { createWorker } from './factory';

export const WORKFLOWS_PATH = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));

export type QueueName = keyof QueueActivities;
export const ALL_QUEUES: QueueName[] = ['control', 'browser', 'train'];

interface WorkerDependencies {
  store: ArtifactStore;
  ctx: CampaignContext;
  /** Each campaign config's model roles, resolved once per worker (activities/campaign/backends.ts). */
  roles: RolesFor;
  /** Started only on a worker that serves the browser queue. */
  runtime: BrowserRuntime | undefined;
}

/** Each queue's activities over the worker's dependencies (the control queue also moves artifacts for `stack check`). */
export const QUEUE_ACTIVITIES: { [Q in QueueName]: (deps: WorkerDependencies) => QueueActivities[Q] } = {
  control: ({ store, ctx, roles }) => ({ ...createArtifactActivities({ store }), ...createControlActivities({ ctx, roles }) }),
  browser: ({ ctx, runtime, roles }) => createBrowserActivities({ ctx, runtime: runtime!, roles }),
  train: ({ ctx, roles }) => ({ ...createTrainActivities({ ctx, roles }), ...createDeployActivities({ ctx, roles }) }),
};

/**
 * The embedded sites' ports that another process holds now. A browser worker serves the sites on
 * fixed ports (so observations are the same after a restart); a second worker on the same machine
 * would fail every browser activity on them.
 */
async function heldSitePorts(config: Settings['config']): Promise<string[]> {
  const ports = Object.entries(config.sites.ports);
  const free = await Promise.all(ports.map(([, port]) => portIsFree(config.sites.host, port)));
  return ports.filter((_, i) => !free[i]).map(([site, port]) => `${site} ${config.sites.host}:${port}`);
}

export interface RunWorkersOptions {
  /** Called once the workers poll their task queues. */
  onPolling?(): void;
}

export async function runWorkers(settings: Settings, requested: QueueName[], signal?: AbortSignal, options: RunWorkersOptions = {}): Promise<void> {
  const { config, secrets } = settings;
  let queues = requested;
  if (queues.includes('browser')) {
    const held = await heldSitePorts(config);
    if (held.length) {
      queues = queues.filter((queue) => queue !== 'browser');
      console.log(
        `not serving browser work: the embedded sites' ports are held (${held.join(', ')}), probably by another worker on this machine; ` +
          'it serves the browser queue. Give this one ports of its own with --site-ports SITE=PORT,... (or sites.ports) to serve it too',
      );
      if (!queues.length) throw new StackError('nothing left to serve: this worker was asked for the browser queue only');
    }
  }
  const store = new ArtifactStore(config.s3, secrets.s3);
  await store.checkAccess();
  const ctx = new CampaignContext(store, join(resolve(config.stack.dataDir), 'work'));
  const roles = createRoleResolver({ ctx, models: new ModelCache(ctx), secrets: secrets.models ?? loadModelSecrets() });
  const runtime = queues.includes('browser') ? await BrowserRuntime.start(config) : undefined;
  const connection = await connectWorker(config, secrets);
  const workers: Worker[] = [];
  try {
    for (const queue of queues) {
      const taskQueue = config.temporal.taskQueues[queue];
      const activities = QUEUE_ACTIVITIES[queue]({ store, ctx, roles, runtime });
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
    const running = Promise.all(workers.map((worker) => worker.run()));
    // Shut down only once they run (a shutdown before run() would leave run() waiting forever).
    const shutdown = () => workers.forEach((worker) => worker.shutdown());
    if (signal?.aborted) shutdown();
    else signal?.addEventListener('abort', shutdown, { once: true });
    console.log(`worker polling task queues ${queues.map((q) => `'${config.temporal.taskQueues[q]}'`).join(', ')} on ${config.temporal.address}`);
    options.onPolling?.();
    await running;
  } finally {
    await connection.close();
    await runtime?.close();
    store.destroy();
  }
}

/**
 * Runs the workers until `signal` aborts, starting them again whenever they stop because Temporal or
 * storage does not answer (the outage is told once, and its end); other failures are thrown.
 */
export function superviseWorkers(settings: Settings, queues: QueueName[], signal: AbortSignal, outages: OutageWatch): Promise<void> {
  const back = () => {
    outages.up('Temporal');
    outages.up('storage');
  };
  return keepRunning(() => runWorkers(settings, queues, signal, { onPolling: back }), outages, signal);
}
