/**
 * Running a list of tasks in the browser as durable work: each finished trajectory is stored at once
 * (trace in WebRL's shape, plus the model states the policy saw), so a shard retried after a crash
 * resumes from what is stored and reruns only the unfinished episodes. Infrastructure failures are
 * retried here a few times, then surface as a retryable activity failure.
 */
import { Context } from '@temporalio/activity';
import { createHash } from 'node:crypto';
import type { EvaluationDetails } from '../../browser/contract';
import type { EpisodeOptions } from '../../browser/episode';
import { executorOptionsFor } from '../../browser/executor';
import type { Policy, PolicyTask } from '../../browser/policies/policy';
import { toEpisodeTask } from '../../env/tasks/episodeTask';
import type { EnvironmentTask } from '../../env/backends/contract';
import type { EpisodeRound } from '../../models/orm';
import { recordingPolicy } from '../../models/recordingPolicy';
import { scrubValue } from '../../storage/scrub';
import { StoreTraceSink } from '../../storage/storeTraceSink';
import type { BrowserRuntime } from './browserRuntime';
import type { CampaignContext } from './context';
import { beatNow, withHeartbeats } from '../heartbeats';
import type { Config } from '../../config/campaignConfig';
import { campaignEnvironment, siteUnavailableFailure } from './environments';

export interface TrajectoryRecord {
  taskId: string;
  site: string;
  intent: string;
  /** The environment's evaluator score (ground truth; the ORM's reward comes later). */
  score: number;
  /** What the evaluator reported beside the score, when it does (MiniWoB++: the page's raw reward). */
  evaluation?: EvaluationDetails;
  /** Files stored beside the trace (name -> key; WebArena-Verified: `network.har`). */
  files?: Record<string, string>;
  /** Whether the task had an evaluator; `score` is 0 and means nothing when it had none. */
  graded: boolean;
  steps: number;
  answer: string | null;
  reason: string;
  traceKey: string;
  /** Each policy call: the state the model saw and what it answered. */
  rounds: EpisodeRound[];
}

/** One row of a shard's index: small, deterministic, no timings. */
export interface TrajectoryIndexRow {
  taskId: string;
  site: string;
  trajectoryKey: string;
  traceKey: string;
  score: number;
  steps: number;
  answer: string | null;
  reason: string;
}

const INFRA_ATTEMPTS = 3;

export class InfrastructureFailure extends Error {
  override name = 'InfrastructureFailure';
}

export function indexRow(record: TrajectoryRecord, trajectoryKey: string): TrajectoryIndexRow {
  const { taskId, site, traceKey, score, steps, answer, reason } = record;
  return { taskId, site, trajectoryKey, traceKey, score, steps, answer, reason };
}

export function episodeOptions(config: Config): Partial<EpisodeOptions> {
  const { maxSteps, episodeDeadlineSeconds, observation } = config.campaign.environment;
  return { maxSteps, deadlineMs: episodeDeadlineSeconds * 1000, executor: executorOptionsFor(observation.profile, observation.minWaitMs) };
}

/** Whether the episode stored under `trajectoryKey` keeps screenshots: a fixed share of episodes, the same on every retry. */
export function keepsScreenshots(trajectoryKey: string, rate: number): boolean {
  if (rate <= 0) return false;
  const draw = createHash('sha256').update(trajectoryKey).digest().readUInt32BE(0) / 2 ** 32;
  return draw < rate;
}

export interface RunTasksRequest {
  ctx: CampaignContext;
  runtime: BrowserRuntime;
  config: Config;
  tasks: readonly EnvironmentTask[];
  /** Storage prefix of this unit of work, ending in '/'. */
  prefix: string;
  /** What this run is within its activity (`oracle`, `train shard 3`), named in its heartbeats. */
  stage: string;
  /** A fresh policy per task (policies may hold per-episode state). */
  policyFor(task: EnvironmentTask): Policy;
  /** Per-task override of the episode options (e.g. a shorter cap for negative examples). */
  options?: Partial<EpisodeOptions>;
}

/** Runs every task (resuming from stored trajectories) and returns their index rows in task order. */
export async function runTasks(request: RunTasksRequest): Promise<TrajectoryIndexRow[]> {
  const { ctx, runtime, config, tasks, prefix } = request;
  const { environment, siteUrls, unavailable } = await campaignEnvironment(runtime, config, tasks);
  const sink = new StoreTraceSink(ctx.store, `${prefix}traces/`, `${prefix}actions/`);
  let done = 0;
  const progress = () => ({ stage: request.stage, episodesDone: done, episodes: tasks.length });
  const cancelled = Context.current().cancellationSignal;

  const runOne = async (task: EnvironmentTask): Promise<TrajectoryIndexRow> => {
    const taskId = String(task.task_id);
    const trajectoryKey = `${prefix}trajectories/${taskId}.json`;
    const stored = await ctx.store.tryGetJson<TrajectoryRecord>(trajectoryKey);
    if (stored) {
      done++;
      beatNow();
      return indexRow(stored, trajectoryKey);
    }
    for (let attempt = 1; ; attempt++) {
      // A cancelled shard (the phase failed elsewhere) starts no more episodes on the sites.
      if (cancelled.aborted) throw cancelled.reason;
      const recorder = recordingPolicy(request.policyFor(task));
      const policyTask: PolicyTask = toEpisodeTask(task, siteUrls);
      const { outcome } = await runtime.pool.runEpisode({
        task: policyTask,
        policy: recorder.policy,
        environment,
        traceId: taskId,
        traceSink: sink,
        signal: cancelled,
        options: {
          ...episodeOptions(config),
          screenshots: keepsScreenshots(trajectoryKey, config.campaign.environment.screenshotRate),
          ...request.options,
        },
      });
      if (outcome.infraFailure) {
        Context.current().log.warn('episode hit an infrastructure failure', { taskId, attempt, reason: outcome.reason, detail: outcome.detail });
        if (attempt >= INFRA_ATTEMPTS) {
          // On shared sites (WebArena's), a site that stays down is named and the phase waits for an operator.
          const down = await unavailable?.(task);
          if (down?.length) throw siteUnavailableFailure(`task ${taskId}: ${down.join('; ')}`);
          throw new InfrastructureFailure(`task ${taskId}: ${outcome.reason} after ${attempt} attempts: ${outcome.detail ?? ''}`);
        }
        continue;
      }
      const record: TrajectoryRecord = {
        taskId,
        site: task.sites[0] ?? 'unknown',
        intent: task.intent,
        score: outcome.score,
        ...(outcome.evaluation === undefined ? {} : { evaluation: outcome.evaluation }),
        ...(outcome.files === undefined ? {} : { files: outcome.files }),
        graded: Boolean((task as Partial<EnvironmentTask>).eval),
        steps: outcome.steps,
        answer: outcome.answer,
        reason: outcome.reason,
        traceKey: sink.keyOf(taskId),
        rounds: recorder.rounds,
      };
      // The rounds hold the pages as the policy saw them: stored scrubbed, like the trace.
      await ctx.store.putJson(trajectoryKey, scrubValue(record));
      done++;
      beatNow();
      return indexRow(record, trajectoryKey);
    }
  };
  return withHeartbeats(progress, Promise.all(tasks.map(runOne)));
}
