/**
 * Builds workers: one per task queue, all sharing one Temporal connection and, per workflows module,
 * one workflow bundle built once per process (bundling takes seconds; workers are cheap).
 */
import { bundleWorkflowCode, Worker, type NativeConnection } from '@temporalio/worker';
import { timerHeartbeats } from '../activities/heartbeats';
import type { Config } from '../config/campaignConfig';

type Bundle = Awaited<ReturnType<typeof bundleWorkflowCode>>;
const bundles = new Map<string, Promise<Bundle>>();

export function workflowBundle(workflowsPath: string): Promise<Bundle> {
  let bundle = bundles.get(workflowsPath);
  if (!bundle) {
    bundle = bundleWorkflowCode({ workflowsPath, logger: { ...quietBundlerLogger } });
    bundles.set(workflowsPath, bundle);
  }
  return bundle;
}

/** The bundler logs every webpack step at info level; keep only warnings and errors. */
const quietBundlerLogger = {
  log: () => undefined,
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: (message: string) => console.warn(message),
  error: (message: string) => console.error(message),
};

export interface WorkerSpec {
  connection: NativeConnection;
  config: Config;
  taskQueue: string;
  /** Module exporting the workflows; omit for an activities-only worker. */
  workflowsPath?: string;
  activities?: object;
  maxConcurrentActivities?: number;
}

export async function createWorker(spec: WorkerSpec): Promise<Worker> {
  return Worker.create({
    connection: spec.connection,
    namespace: spec.config.temporal.namespace,
    taskQueue: spec.taskQueue,
    ...(spec.workflowsPath ? { workflowBundle: await workflowBundle(spec.workflowsPath) } : {}),
    ...(spec.activities ? { activities: spec.activities } : {}),
    maxConcurrentActivityTaskExecutions: spec.maxConcurrentActivities ?? spec.config.concurrency.maxConcurrentActivities,
    // Every activity heartbeats from a timer while it runs, not only between the steps that report progress.
    interceptors: { activity: [timerHeartbeats] },
  });
}
