/**
 * The main job (`npm run campaign`): bring up the local stack, run the all-in-one worker in this
 * process, start the campaign (or attach to it if it already runs), show live progress with a bar per
 * activity (plain lines when the output is not a terminal), print the Temporal UI link, and end with
 * the report. The SDK's own log lines go to a file in the data dir, not into the progress view.
 * Interrupting it (Ctrl-C) stops the worker only: the campaign stays in Temporal, and running the
 * command again picks it up. A campaign that finished earlier is only reported, never run again.
 */
import cliProgress from 'cli-progress';
import type { Client, WorkflowExecutionDescription, WorkflowHandle } from '@temporalio/client';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { environmentS3Credentials, withLocalStackCredentials, type Settings } from '../infra/settings';
import { OutageWatch, unreachableServer, watchStorage } from '../infra/outage';
import { stackPaths, stackUp } from '../infra/stack';
import { startLocalLlm } from '../infra/vllm/localLlm';
import { describeTool, ensureTools, type Log } from '../infra/tools';
import { ArtifactStore } from '../storage/artifactStore';
import { connectClient } from '../temporal/connection';
import { installSdkLogFile } from '../workers/logFile';
import { ALL_QUEUES, superviseWorkers } from '../workers/run';
import { progressQuery, type campaignWorkflow } from '../workflows/campaign';
import type { CampaignProgress } from '../workflows/campaignTypes';
import { assertModelsReady } from '../models/backends/registry';
import { campaignHandle, startCampaign } from './control';

interface ActivityProgress {
  type: string;
  done: number;
  total: number;
  /** The attempt under way (1 for the first), and why the one before it failed. */
  attempt: number;
  lastFailure?: string;
  /** The time left the activity estimates (a training job's, from its pace), in words. */
  left?: string;
}

function decodeHeartbeat(details: unknown): Record<string, unknown> | undefined {
  const payload = (details as { payloads?: Array<{ data?: Uint8Array }> } | undefined)?.payloads?.[0]?.data;
  if (!payload) return undefined;
  try {
    return JSON.parse(Buffer.from(payload).toString()) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/**
 * A bar's name: the activity, and the part of it and the model and stage its heartbeat names, so
 * that rollout shards running side by side, an activity's passes (oracle then perturbed
 * demonstrations), a training activity's jobs (ORM then critic) and stages (an ORM's calibration
 * after its steps) read apart and no bar seems to count backwards.
 */
export function activityLabel(type: string, beat: Record<string, unknown>): string {
  const part = typeof beat.stage === 'string' ? ` ${beat.stage}` : '';
  const model = typeof beat.model === 'string' ? ` ${beat.model}` : '';
  const stage = typeof beat.phase === 'string' && beat.phase !== 'training' ? ` · ${beat.phase}` : '';
  return `${type}${part}${model}${stage}`;
}

/** Seconds as a person reads a time left: "40 s", "12 min", "3 h 5 min". */
export function timeLeftInWords(seconds: number): string {
  if (seconds < 60) return `${Math.max(0, Math.round(seconds))} s`;
  const minutes = Math.round(seconds / 60);
  return minutes < 60 ? `${minutes} min` : `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/**
 * A heartbeat's counts as done/total for a progress bar: episodes, a training job's steps, bytes or
 * start pages; a trainer that reports only a fraction, as a percentage.
 */
export function heartbeatProgress(beat: Record<string, unknown>): Pick<ActivityProgress, 'done' | 'total' | 'left'> {
  const percent = beat.totalSteps === undefined && typeof beat.fraction === 'number' ? Math.round(100 * beat.fraction) : undefined;
  const done = Number(beat.episodesDone ?? beat.step ?? beat.bytesDone ?? beat.startPages ?? percent ?? 0);
  const total = Number(beat.episodes ?? beat.totalSteps ?? beat.bytesTotal ?? (percent !== undefined ? 100 : 0));
  return { done, total: Math.max(total, done, 1), ...(typeof beat.secondsLeft === 'number' ? { left: timeLeftInWords(beat.secondsLeft) } : {}) };
}

/** What each pending activity reports in its heartbeats, as done/total for a progress bar. */
function pendingProgress(description: WorkflowExecutionDescription): ActivityProgress[] {
  return (description.raw.pendingActivities ?? []).map((activity) => {
    const beat = decodeHeartbeat(activity.heartbeatDetails) ?? {};
    return {
      type: activityLabel(activity.activityType?.name ?? 'activity', beat),
      ...heartbeatProgress(beat),
      attempt: activity.attempt ?? 1,
      ...(activity.lastFailure?.message ? { lastFailure: activity.lastFailure.message } : {}),
    };
  });
}

/** An activity's count as the live line shows it, with the time left when known. */
function counted(activity: ActivityProgress): string {
  return `${activity.done}/${activity.total}${activity.left ? ` · about ${activity.left} left` : ''}`;
}

/** The campaign's latest run when it has finished (completed, or stopped by request); else undefined. */
async function finishedRun(client: Client, name: string): Promise<CampaignProgress | undefined> {
  const handle = campaignHandle(client, name);
  try {
    if ((await handle.describe()).status.name !== 'COMPLETED') return undefined;
  } catch {
    return undefined; // Never started.
  }
  return (await handle.result()) as CampaignProgress;
}

async function attachOrStart(client: Client, store: ArtifactStore, settings: Settings, log: Log) {
  const existing = campaignHandle(client, settings.config.campaign.name);
  try {
    const description = await existing.describe();
    if (description.status.name === 'RUNNING') {
      log(`campaign ${settings.config.campaign.name} is already running; attaching to it`);
      return existing;
    }
  } catch {
    // Not started yet.
  }
  return startCampaign(client, store, settings.config);
}

/** How the live view shows the campaign's status line and its running activities. */
interface ProgressView {
  show(status: string, activities: ActivityProgress[]): void;
  /** A line the user should read (a retry and why), printed above the bars. */
  notice(line: string): void;
  stop(): void;
}

/** On a terminal: one line of status, one bar per running activity, redrawn in place. */
function barView(): ProgressView {
  const bars = new cliProgress.MultiBar(
    { format: ' {name} |{bar}| {value}/{total}{left}', hideCursor: true, clearOnComplete: true, stopOnComplete: false },
    cliProgress.Presets.shades_classic,
  );
  const statusBar = bars.create(1, 0, { name: 'starting'.padEnd(40) }, { format: ' {name}' });
  const active = new Map<string, cliProgress.SingleBar>();
  return {
    show(status, activities) {
      statusBar.update(0, { name: status });
      const seen = new Set<string>();
      activities.forEach((activity, i) => {
        const key = `${activity.type}#${i}`;
        seen.add(key);
        const payload = { name: activity.type.padEnd(40), left: activity.left ? ` · about ${activity.left} left` : '' };
        const bar = active.get(key) ?? bars.create(activity.total, 0, payload);
        active.set(key, bar);
        bar.setTotal(activity.total);
        bar.update(activity.done, payload);
      });
      for (const [key, bar] of active) {
        if (!seen.has(key)) {
          bars.remove(bar);
          active.delete(key);
        }
      }
    },
    notice: (line) => bars.log(`${line}\n`),
    stop: () => bars.stop(),
  };
}

export const PLAIN_PROGRESS_EVERY_MS = 60_000;

/**
 * Into a file or a pipe, where bars cannot redraw: a line each time the status changes, and the
 * running activities' counts at most once a minute, so a log of a days-long run stays readable.
 */
export function plainView(log: Log, now: () => number = Date.now): ProgressView {
  let lastStatus = '';
  let lastCounts: number | undefined;
  return {
    show(status, activities) {
      if (status !== lastStatus) log(status);
      lastStatus = status;
      if (activities.length === 0 || (lastCounts !== undefined && now() - lastCounts < PLAIN_PROGRESS_EVERY_MS)) return;
      lastCounts = now();
      log(`  ${activities.map((a) => `${a.type} ${counted(a)}`).join(', ')}`);
    },
    notice: log,
    stop: () => undefined,
  };
}

/** How the main job ended. */
export type MainJobOutcome =
  /** The campaign finished while this job watched it. */
  | { kind: 'finished'; progress: CampaignProgress }
  /** It had finished before this job started; nothing ran. */
  | { kind: 'finished-earlier'; progress: CampaignProgress }
  /** The user interrupted the job; the campaign waits in Temporal, last seen as `progress`. */
  | { kind: 'interrupted'; progress?: CampaignProgress };

/**
 * Live view until the campaign ends (its result), the user interrupts (undefined), or the worker
 * stops for good (thrown: without it nothing would ever move again). A Temporal server that stops
 * answering is waited for: the view says so once and carries on when it is back.
 */
async function watch(
  handle: WorkflowHandle<typeof campaignWorkflow>,
  log: Log,
  interrupt: AbortSignal,
  workers: Promise<void>,
  outages: OutageWatch,
): Promise<{ result?: CampaignProgress; last?: CampaignProgress }> {
  // cli-progress draws on stderr; without a terminal there, its bars would print a line per redraw.
  const view = process.stderr.isTTY ? barView() : plainView(log);
  let workerFailure: unknown;
  workers.then(
    () => (workerFailure ??= new Error('the worker stopped')),
    (error: unknown) => (workerFailure ??= error),
  );
  const interrupted = new Promise<void>((resolve) => interrupt.addEventListener('abort', () => resolve(), { once: true }));
  let status = 'starting';
  let last: CampaignProgress | undefined;
  // Retries are told once each, in plain words; their details are in the worker log.
  const retriesTold = new Set<string>();
  try {
    while (!interrupt.aborted) {
      if (workerFailure) throw workerFailure;
      try {
        const description = await handle.describe();
        outages.up('Temporal');
        // The latest run has ended: completed, or failed for good (result() throws then).
        if (description.status.name !== 'RUNNING') return { result: (await handle.result()) as CampaignProgress };
        const progress = await handle.query(progressQuery).catch(() => undefined);
        if (progress) {
          last = progress;
          const phase = progress.history[progress.history.length - 1];
          status =
            `phase ${progress.phase}/${progress.phases} · ${progress.status}${progress.activity ? ` · ${progress.activity}` : ''}` +
            (phase ? ` · last test success ${(100 * phase.successRate).toFixed(1)}%` : '') +
            (progress.failure ? ` · FAILED ${progress.failure.activity}: ${progress.failure.message} (webrl campaign retry-phase)` : '');
        }
        const activities = pendingProgress(description);
        for (const activity of activities) {
          const key = `${activity.type}#${activity.attempt}`;
          if (activity.attempt > 1 && !retriesTold.has(key)) {
            retriesTold.add(key);
            view.notice(`${activity.type}: attempt ${activity.attempt}, the last one failed: ${activity.lastFailure ?? 'timed out'}`);
          }
        }
        view.show(status, activities);
      } catch (error) {
        if (unreachableServer(error) !== 'Temporal') throw error;
        outages.down('Temporal');
      }
      await Promise.race([interrupted, delay(1000)]);
    }
  } finally {
    view.stop();
  }
  return { ...(last ? { last } : {}) };
}

export interface MainJobOptions {
  /** Ctrl-C: stop watching and stop the worker; the campaign waits in Temporal. */
  interrupt: AbortSignal;
  /** How long a Temporal or storage outage is waited for before the job gives up. */
  outageLimitMs: number;
}

export async function runMainJob(loaded: Settings, log: Log, options: MainJobOptions): Promise<{ outcome: MainJobOutcome; settings: Settings }> {
  // The actor's files on this disk are checked before minutes of provisioning (again, whole, at start).
  await assertModelsReady(loaded.config, `campaign ${loaded.config.campaign.name}`);
  const tools = await ensureTools(log);
  for (const tool of Object.values(tools)) log(describeTool(tool));
  const endpoints = await stackUp(loaded.config, {
    temporalBinary: tools.temporal.path,
    minioBinary: tools.minio.path,
    s3Credentials: environmentS3Credentials(loaded),
    log,
  });
  const settings = await withLocalStackCredentials(loaded);
  const llm = await startLocalLlm(settings.config, log);
  const client = await connectClient(settings.config, settings.secrets);
  const store = new ArtifactStore(settings.config.s3, settings.secrets.s3);
  try {
    const name = settings.config.campaign.name;
    const earlier = await finishedRun(client, name);
    if (earlier) {
      log(`campaign ${name} has already finished (${earlier.status}); its report:`);
      return { outcome: { kind: 'finished-earlier', progress: earlier }, settings };
    }
    // Installed only when a worker runs: the runtime it installs keeps the process alive until
    // the worker's shutdown releases it.
    const sdkLog = join(stackPaths(settings.config).logDir, 'worker.log');
    installSdkLogFile(sdkLog);
    log(`worker log: ${sdkLog}`);
    const outages = new OutageWatch(log, options.outageLimitMs, (server) =>
      server === 'Temporal' ? `the Temporal server at ${settings.config.temporal.address}` : `storage at ${settings.config.s3.endpoint}`,
    );
    const stop = new AbortController();
    // Both end only when stopped; either failing for good ends the watch.
    const background = Promise.all([
      superviseWorkers(settings, ALL_QUEUES, stop.signal, outages),
      watchStorage(() => store.checkAccess(), outages, stop.signal),
    ]).then(() => undefined);
    try {
      const handle = await attachOrStart(client, store, settings, log);
      log(`Temporal UI: ${endpoints.temporalUi}/namespaces/${endpoints.namespace}/workflows/${handle.workflowId}`);
      const { result, last } = await watch(handle, log, options.interrupt, background, outages);
      return { outcome: result ? { kind: 'finished', progress: result } : { kind: 'interrupted', ...(last ? { progress: last } : {}) }, settings };
    } finally {
      stop.abort();
      await background.catch(() => undefined);
    }
  } finally {
    await client.connection.close();
    store.destroy();
    await llm?.stop();
  }
}
