/**
 * Running a list of tasks in the browser as durable work: each finished trajectory is stored at once
 * (trace in WebRL's shape, plus the model states the policy saw), so a shard retried after a crash
 * resumes from what is stored and reruns only the unfinished episodes. Infrastructure failures are
 * retried here a few times, then surface as a retryable activity failure.
 */
import { Context } from '@temporalio/activity';
import type { EpisodeOptions } from '../../browser/episode';
import type { Policy, PolicyTask } from '../../browser/policies/policy';
import { EmbeddedEnvironment, toEpisodeTask } from '../../env/embedded';
import type { WebArenaTask } from '../../env/tasks/schema';
import type { ModelState } from '../../models/state';
import { StoreTraceSink } from '../../storage/storeTraceSink';
import type { BrowserRuntime } from './browserRuntime';
import { withHeartbeats, type CampaignContext } from './context';
import type { Config } from '../../config/schema';

/** What a rollout keeps of each policy call: the state the model saw and what it answered. */
export interface Round {
  state: ModelState;
  response: string;
}

export interface TrajectoryRecord {
  taskId: string;
  site: string;
  intent: string;
  /** The environment's evaluator score (ground truth; the ORM's reward comes later). */
  score: number;
  steps: number;
  answer: string | null;
  reason: string;
  traceKey: string;
  rounds: Round[];
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

/** Wraps a policy so that every state it is shown, and its reply, is kept for training. */
function recordingPolicy(inner: Policy): { policy: Policy; rounds: Round[] } {
  const rounds: Round[] = [];
  return {
    rounds,
    policy: {
      name: inner.name,
      async act(input) {
        const output = await inner.act(input);
        rounds.push({
          state: { intent: input.task.intent, history: [...input.history], observation: input.observation },
          response: output.response,
        });
        return output;
      },
    },
  };
}

export function indexRow(record: TrajectoryRecord, trajectoryKey: string): TrajectoryIndexRow {
  const { taskId, site, traceKey, score, steps, answer, reason } = record;
  return { taskId, site, trajectoryKey, traceKey, score, steps, answer, reason };
}

export function episodeOptions(config: Config): Partial<EpisodeOptions> {
  return { maxSteps: config.campaign.environment.maxSteps, deadlineMs: config.campaign.environment.episodeDeadlineSeconds * 1000 };
}

export interface RunTasksRequest {
  ctx: CampaignContext;
  runtime: BrowserRuntime;
  config: Config;
  tasks: readonly WebArenaTask[];
  /** Storage prefix of this unit of work, ending in '/'. */
  prefix: string;
  /** A fresh policy per task (policies may hold per-episode state). */
  policyFor(task: WebArenaTask): Policy;
  /** Per-task override of the episode options (e.g. a shorter cap for negative examples). */
  options?: Partial<EpisodeOptions>;
}

/** Runs every task (resuming from stored trajectories) and returns their index rows in task order. */
export async function runTasks(request: RunTasksRequest): Promise<TrajectoryIndexRow[]> {
  const { ctx, runtime, config, tasks, prefix } = request;
  const sites = await runtime.embeddedSites(config.campaign.environment.worldSeed);
  const environment = new EmbeddedEnvironment({ siteUrls: sites.urls, tasks });
  const sink = new StoreTraceSink(ctx.store, `${prefix}traces/`);
  let done = 0;
  const progress = () => ({ episodesDone: done, episodes: tasks.length });
  const heartbeat = () => Context.current().heartbeat(progress());

  const runOne = async (task: WebArenaTask): Promise<TrajectoryIndexRow> => {
    const taskId = String(task.task_id);
    const trajectoryKey = `${prefix}trajectories/${taskId}.json`;
    const stored = await ctx.store.tryGetJson<TrajectoryRecord>(trajectoryKey);
    if (stored) {
      done++;
      heartbeat();
      return indexRow(stored, trajectoryKey);
    }
    for (let attempt = 1; ; attempt++) {
      const recorder = recordingPolicy(request.policyFor(task));
      const policyTask: PolicyTask = toEpisodeTask(task, sites.urls);
      const { outcome } = await runtime.pool.runEpisode({
        task: policyTask,
        policy: recorder.policy,
        environment,
        traceId: taskId,
        traceSink: sink,
        options: { ...episodeOptions(config), ...request.options },
      });
      if (outcome.infraFailure) {
        Context.current().log.warn('episode hit an infrastructure failure', { taskId, attempt, reason: outcome.reason, detail: outcome.detail });
        if (attempt >= INFRA_ATTEMPTS) {
          throw new InfrastructureFailure(`task ${taskId}: ${outcome.reason} after ${attempt} attempts: ${outcome.detail ?? ''}`);
        }
        continue;
      }
      const record: TrajectoryRecord = {
        taskId,
        site: task.sites[0] ?? 'unknown',
        intent: task.intent,
        score: outcome.score,
        steps: outcome.steps,
        answer: outcome.answer,
        reason: outcome.reason,
        traceKey: sink.keyOf(taskId),
        rounds: recorder.rounds,
      };
      await ctx.store.putJson(trajectoryKey, record);
      done++;
      heartbeat();
      return indexRow(record, trajectoryKey);
    }
  };
  return withHeartbeats(progress, Promise.all(tasks.map(runOne)));
}
