/**
 * The `webarena-verified` harness: a task's score is what WebArena-Verified's official evaluator
 * (the PyPI package, through ./client.ts) gives the agent's response and the episode's network trace.
 *
 * The actor still ends with `exit(message=...)`; the message is read as the JSON response the
 * benchmark asks for (`{task_type, status, retrieved_data, error_details}`). A message that is not a
 * JSON object goes to the evaluator as the text it is (it fails there), and the reason is recorded.
 */
import type { EvaluationDetails } from '../../../../browser/contract';
import type { SiteUrls } from '../../../siteUrls';
import { TaskConfigError, type WebArenaTask } from '../../../tasks/schema';
import type { EpisodeEvidence } from '../contract';
import { sharedVerifiedEvaluator, type EvaluationRequest, type TaskEvalResult } from './client';

/** The exit message as the benchmark's response: the JSON object, or the text with why it is not one. */
export function agentResponse(answer: string | null): { response: unknown; problem?: string } {
  if (answer === null) return { response: null, problem: 'the episode ended without exit(message=...)' };
  let parsed: unknown;
  try {
    parsed = JSON.parse(answer);
  } catch (error) {
    return { response: answer, problem: `the exit message is not JSON: ${(error as Error).message}` };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    return { response: answer, problem: 'the exit message is JSON but not an object' };
  return { response: parsed };
}

/** Every problem of a task under this harness: it must come from a WebArena-Verified file. */
export function verifiedTaskProblems(task: WebArenaTask): TaskConfigError[] {
  const problems: TaskConfigError[] = [];
  if (task.eval.eval_types.join() !== 'webarena_verified' || !task.verified) {
    problems.push(
      new TaskConfigError(
        task.task_id,
        'eval',
        "harness webarena-verified scores tasks in WebArena-Verified's format only (start_urls, an eval list); use harness webarena-lite or webarena for this one",
      ),
    );
  }
  return problems;
}

/** Tries per episode when the evaluator's process dies under it (killed for memory on a loaded machine, say). */
const EVALUATOR_ATTEMPTS = 3;

/**
 * One evaluation; a process that exited while it ran is started again and asked again, so an evaluator
 * that went down costs time, not a score. What the package itself answers (its errors included) is final.
 */
async function evaluateRetryingExits(request: EvaluationRequest): Promise<{ result: TaskEvalResult; ms: number }> {
  for (let attempt = 1; ; attempt++) {
    const evaluator = await sharedVerifiedEvaluator();
    try {
      return await evaluator.evaluate(request);
    } catch (error) {
      if (evaluator.alive || attempt >= EVALUATOR_ATTEMPTS) throw error;
    }
  }
}

/** Scores one episode with the official evaluator. */
export async function scoreVerified(
  task: WebArenaTask,
  siteUrls: SiteUrls,
  answer: string | null,
  evidence: EpisodeEvidence = {},
): Promise<{ score: number; details: EvaluationDetails }> {
  const { response, problem } = agentResponse(answer);
  const sites = Object.fromEntries(task.sites.flatMap((site) => (siteUrls[site as keyof SiteUrls] ? [[site, siteUrls[site as keyof SiteUrls]!]] : [])));
  const { result, ms } = await evaluateRetryingExits({ task: task.verified, response, entries: evidence.network ?? [], sites });
  const details: EvaluationDetails = {
    status: result.status,
    evaluators: result.evaluators_results.map((entry) => `${entry.evaluator_name}: ${entry.status}`).join('; '),
    evaluator_ms: Math.round(ms * 10) / 10,
  };
  const failed = result.evaluators_results.flatMap((entry) => (entry.assertions ?? []).filter((a) => a.status !== 'success').map((a) => a.assertion_name));
  if (failed.length) details.failed_assertions = failed.join(', ');
  if (result.error_msg) details.error = result.error_msg;
  if (problem) details.response_problem = problem;
  return { score: result.score, details };
}
