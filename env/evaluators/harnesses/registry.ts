/**
 * The evaluation harnesses by name: a campaign's `harness` (and `webrl tasks --harness`) picks one,
 * once, and callers ask it rather than its name. A new harness is a folder here implementing
 * ./contract.ts, its name in ./names.ts and one line below.
 */
import { TaskConfigError, type WebArenaTask } from '../../tasks/schema';
import type { EvaluationHarness, ScoringOptions, TaskEvaluator } from './contract';
import { DEFAULT_HARNESS, HARNESS_NAMES, type HarnessName } from './names';
import { webArenaVerifiedHarness } from './verified';
import { webArenaLiteHarness, webArenaOriginalHarness } from './webarena';

const HARNESSES: Record<HarnessName, EvaluationHarness> = {
  'webarena-lite': webArenaLiteHarness,
  webarena: webArenaOriginalHarness,
  'webarena-verified': webArenaVerifiedHarness,
};

/** The options a task set is scored with: the harness's name (default `webarena-lite`) and what its evaluators read. */
export interface EvaluatorOptions extends ScoringOptions {
  harness?: HarnessName;
}

/** Every registered harness, in the order `harness` lists them. */
export function registeredHarnesses(): EvaluationHarness[] {
  return HARNESS_NAMES.map((name) => HARNESSES[name]);
}

/** The harness of that name (default `webarena-lite`); an unknown name is an error naming the field and the registered ones. */
export function evaluationHarness(name: string = DEFAULT_HARNESS): EvaluationHarness {
  const harness = (HARNESSES as Record<string, EvaluationHarness | undefined>)[name];
  if (!harness) throw new Error(`harness: "${name}" is not a registered evaluation harness (${HARNESS_NAMES.join(', ')})`);
  return harness;
}

/** The harness a task set is written for: the first that scores every task (a file of mixed formats, or none: the default). */
export function harnessOfTasks(tasks: readonly WebArenaTask[]): EvaluationHarness {
  return (tasks.length ? registeredHarnesses().find((harness) => tasks.every((task) => harness.scores(task))) : undefined) ?? evaluationHarness();
}

/** Builds one task's evaluator under `harness`; its first problem, if any, is thrown. */
export function buildEvaluator(task: WebArenaTask, options: EvaluatorOptions, harness = evaluationHarness(options.harness)): TaskEvaluator {
  const { problems, evaluator } = harness.checkTask(task, options);
  if (problems[0] || !evaluator) throw problems[0] ?? new TaskConfigError(task.task_id, '(task)', 'no evaluator');
  return evaluator;
}
