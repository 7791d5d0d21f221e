/**
 * One episode: the environment prepares the context and names the start URL; then observe -> policy ->
 * parse -> execute, until the agent exits, the environment says its episode is over (after an executed
 * action: `PreparedEpisode.ended`), 30 steps pass, 5 replies in a row fail to parse, 5 identical actions
 * come in a row (the 5th is not executed), or the episode's deadline passes. The environment's evaluator
 * then scores the final page with the last exit message.
 *
 * A browser, page, environment or model endpoint that breaks ends the episode as an INFRASTRUCTURE
 * failure (`infraFailure: true`, not scored) so the caller retries it; everything else is the agent's
 * result. runEpisode never throws.
 */
import type { BrowserContext } from 'playwright-core';
import type { EpisodeEnvironment, PreparedEpisode } from './contract';
import { errorMessage, InfrastructureError, withTimeout, type InfrastructureReason } from './errors';
import type { AgentEndReason, EpisodeOutcome, EpisodeStep } from './episodeRecord';
import { ActionExecutor, DEFAULT_EXECUTOR_OPTIONS, type ExecutorOptions } from './executor';
import { formatAction, parseAction } from './grammar';
import { type HistoryRound, type Policy, type PolicyOutput, type PolicyTask } from './policies/policy';
import { scrubStoredFile, scrubText, scrubValue } from '../storage/scrub';
import { toScoreRecord, toTraceRows, type TraceSink } from './traces';

export interface EpisodeOptions {
  maxSteps: number;
  maxParseFailures: number;
  maxRepeatedActions: number;
  /** Wall-clock budget of the whole episode. */
  deadlineMs: number;
  executor: ExecutorOptions;
  /** Per-step screenshots, stored through the trace sink's writeScreenshot. */
  screenshots: boolean;
  /**
   * How long the evaluator may take: longer than a step, since an evaluator that is slow (queued behind
   * other episodes on a loaded machine) is waited for. One that takes longer still is an infrastructure
   * failure, retried by the caller, never a score.
   */
  evaluationTimeoutMs: number;
}

export const DEFAULT_EPISODE_OPTIONS: EpisodeOptions = {
  maxSteps: 30,
  maxParseFailures: 5,
  maxRepeatedActions: 5,
  deadlineMs: 10 * 60_000,
  executor: DEFAULT_EXECUTOR_OPTIONS,
  screenshots: false,
  evaluationTimeoutMs: 5 * 60_000,
};

export interface EpisodeRequest {
  task: PolicyTask;
  policy: Policy;
  environment: EpisodeEnvironment;
  /** Names the trajectory (default: the task id), so a retried episode overwrites its trace. */
  traceId?: string;
  traceSink?: TraceSink;
  options?: Partial<EpisodeOptions>;
  /** Once aborted, an episode still waiting for its site or a browser slot does not start. */
  signal?: AbortSignal;
}

export interface EpisodeResult {
  outcome: EpisodeOutcome;
  steps: EpisodeStep[];
}

/** How the agent's part ended. */
interface AgentEnd {
  reason: AgentEndReason;
  answer: string | null;
  detail?: string;
}

class DeadlinePassed extends Error {}

/** Runs the policy, giving up (and aborting its request) when the episode's deadline passes. */
async function askPolicy(policy: Policy, input: Omit<Parameters<Policy['act']>[0], 'signal'>, deadline: number): Promise<PolicyOutput> {
  const controller = new AbortController();
  const expired = new Promise<never>((_, reject) => {
    controller.signal.addEventListener('abort', () => reject(new DeadlinePassed()), { once: true });
  });
  const timer = setTimeout(() => controller.abort(), Math.max(0, deadline - performance.now()));
  try {
    return await Promise.race([policy.act({ ...input, signal: controller.signal }), expired]);
  } catch (error) {
    throw controller.signal.aborted ? new DeadlinePassed() : error;
  } finally {
    clearTimeout(timer);
  }
}

async function agentLoop(
  request: EpisodeRequest,
  prepared: PreparedEpisode,
  executor: ActionExecutor,
  options: EpisodeOptions,
  traceId: string,
  deadline: number,
  steps: EpisodeStep[],
): Promise<AgentEnd> {
  const history: HistoryRound[] = [];
  let parseFailures = 0;
  let repeats = 0;
  let previousAction = '';
  for (let index = 0; index < options.maxSteps; index++) {
    if (performance.now() >= deadline) return { reason: 'deadline', answer: null };
    const observeStart = performance.now();
    const observation = await executor.observe();
    const observeMs = performance.now() - observeStart;
    let screenshot: string | undefined;
    if (options.screenshots && request.traceSink?.writeScreenshot) {
      screenshot = (await request.traceSink.writeScreenshot(traceId, index, await executor.screenshot())).key;
    }

    const policyStart = performance.now();
    let decision: PolicyOutput;
    try {
      decision = await askPolicy(request.policy, { task: request.task, observation, history }, deadline);
    } catch (error) {
      if (error instanceof DeadlinePassed) return { reason: 'deadline', answer: null };
      if (error instanceof InfrastructureError) throw error;
      return { reason: 'policy_error', answer: null, detail: errorMessage(error) };
    }
    const parsed = parseAction(decision.response);
    const step: EpisodeStep = {
      index,
      url: observation.url,
      html: observation.html,
      prompt: decision.prompt,
      ...(decision.observationCut === undefined ? {} : { observationCut: decision.observationCut }),
      response: decision.response,
      action: parsed.ok ? parsed.action : null,
      parseError: parsed.ok ? null : parsed.error,
      execution: null,
      timings: { observeMs, policyMs: performance.now() - policyStart, actionMs: 0, settleMs: 0 },
      ...(screenshot === undefined ? {} : { screenshot }),
    };
    steps.push(step);
    history.push({ response: decision.response, action: step.action });

    if (!parsed.ok) {
      parseFailures++;
      previousAction = '';
      if (parseFailures >= options.maxParseFailures) return { reason: 'parse_failures', answer: null };
      continue;
    }
    parseFailures = 0;
    const canonical = formatAction(parsed.action);
    repeats = canonical === previousAction ? repeats + 1 : 1;
    previousAction = canonical;
    if (repeats >= options.maxRepeatedActions) return { reason: 'repeated_actions', answer: null, detail: canonical };
    if (parsed.action.kind === 'exit') return { reason: 'exit', answer: parsed.action.message };

    const result = await executor.execute(parsed.action);
    step.execution = result.ok ? { ok: true } : { ok: false, ...(result.error === undefined ? {} : { error: result.error }) };
    step.timings.actionMs = result.actionMs;
    step.timings.settleMs = result.settleMs;
    // What the agent does after the environment's end would be trained and counted as if it mattered.
    if (await environmentEnded(prepared, executor, options)) return { reason: 'environment_ended', answer: null };
  }
  return { reason: 'max_steps', answer: null };
}

/** Whether the environment says the episode is over (false for one that never says). */
async function environmentEnded(prepared: PreparedEpisode, executor: ActionExecutor, options: EpisodeOptions): Promise<boolean> {
  if (!prepared.ended) return false;
  const what = 'reading whether the environment ended the episode';
  return withTimeout(prepared.ended(executor.page), options.executor.stepTimeoutMs, what).catch((error: unknown) => {
    throw asInfrastructure(error, 'environment_error', what);
  });
}

function asInfrastructure(error: unknown, fallback: InfrastructureReason, what: string): InfrastructureError {
  if (error instanceof InfrastructureError) return error;
  return new InfrastructureError(fallback, `${what}: ${errorMessage(error)}`, { cause: error });
}

export async function runEpisode(context: BrowserContext, request: EpisodeRequest): Promise<EpisodeResult> {
  const options: EpisodeOptions = { ...DEFAULT_EPISODE_OPTIONS, ...request.options };
  const stepTimeoutMs = options.executor.stepTimeoutMs;
  const started = performance.now();
  const deadline = started + options.deadlineMs;
  const traceId = request.traceId ?? String(request.task.task_id);
  const steps: EpisodeStep[] = [];
  const outcome: EpisodeOutcome = {
    taskId: request.task.task_id,
    traceId,
    score: 0,
    steps: 0,
    answer: null,
    infraFailure: false,
    reason: 'max_steps',
    durationMs: 0,
  };
  let prepared: PreparedEpisode | undefined;
  let executor: ActionExecutor | undefined;
  let files: Record<string, string> | undefined;
  try {
    prepared = await withTimeout(request.environment.prepareEpisode(context, request.task), stepTimeoutMs, 'preparing the episode').catch((error: unknown) => {
      throw asInfrastructure(error, 'environment_error', 'preparing the episode');
    });
    executor = await ActionExecutor.open(context, prepared.startUrl, options.executor);
    const end = await agentLoop(request, prepared, executor, options, traceId, deadline, steps);
    Object.assign(outcome, { reason: end.reason, answer: end.answer }, end.detail === undefined ? {} : { detail: end.detail });
    if (end.reason !== 'policy_error') {
      const page = executor.page;
      const evaluated = await withTimeout(prepared.evaluate(page, end.answer), options.evaluationTimeoutMs, 'the evaluator').catch((error: unknown) => {
        const timedOut = error instanceof InfrastructureError && error.reason === 'step_timeout';
        throw timedOut
          ? new InfrastructureError('evaluation_error', `evaluating the episode: ${error.message}`)
          : asInfrastructure(error, 'evaluation_error', 'evaluating the episode');
      });
      if (typeof evaluated === 'number') outcome.score = evaluated;
      else {
        Object.assign(outcome, { score: evaluated.score, evaluation: evaluated.details });
        files = evaluated.files;
      }
    }
  } catch (error) {
    const failure = asInfrastructure(error, 'browser_error', 'running the episode');
    // Whatever step noticed it, a dead browser is the cause.
    const reason = context.browser()?.isConnected() === false ? 'browser_crashed' : failure.reason;
    Object.assign(outcome, { score: 0, infraFailure: true, reason, detail: failure.message });
  } finally {
    executor?.dispose();
    if (prepared) {
      await withTimeout(prepared.dispose(), stepTimeoutMs, 'disposing the episode').catch((error: unknown) => {
        outcome.detail = [outcome.detail, `dispose failed: ${errorMessage(error)}`].filter(Boolean).join('; ');
      });
    }
  }
  outcome.steps = steps.length;
  outcome.durationMs = Math.round(performance.now() - started);
  // What the pages and servers handed back is stored, logged and returned only scrubbed of secrets.
  if (outcome.answer !== null) outcome.answer = scrubText(outcome.answer);
  if (outcome.detail !== undefined) outcome.detail = scrubText(outcome.detail);
  if (outcome.evaluation !== undefined) outcome.evaluation = scrubValue(outcome.evaluation);
  if (request.traceSink) {
    try {
      const sink = request.traceSink;
      if (files && sink.writeFile) {
        const stored = await Promise.all(
          Object.entries(files).map(async ([name, text]) => [name, (await sink.writeFile!(traceId, name, scrubStoredFile(name, text))).key] as const),
        );
        outcome.files = Object.fromEntries(stored);
      }
      const rows = toTraceRows(traceId, request.task.intent, steps, outcome).map((row) => scrubValue(row));
      outcome.traceKey = (await request.traceSink.writeTrajectory(traceId, rows)).key;
      await request.traceSink.writeScore?.(traceId, scrubValue(toScoreRecord(traceId, steps, outcome)));
    } catch (error) {
      Object.assign(outcome, { infraFailure: true, reason: 'trace_write_failed', detail: errorMessage(error) });
    }
  }
  return { outcome, steps };
}

/** The result of an episode that could not even start (no browser context could be had). */
export function unstartedEpisode(request: EpisodeRequest, error: unknown): EpisodeResult {
  const failure = asInfrastructure(error, 'browser_unavailable', 'creating a browser context');
  return {
    outcome: {
      taskId: request.task.task_id,
      traceId: request.traceId ?? String(request.task.task_id),
      score: 0,
      steps: 0,
      answer: null,
      infraFailure: true,
      reason: failure.reason,
      detail: failure.message,
      durationMs: 0,
    },
    steps: [],
  };
}
