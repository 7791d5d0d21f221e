/**
 * An environment's tasks by id, each with its evaluator built once, on the first episode that needs it
 * (building one resolves placeholders and compiles its checks). Shared by every `EpisodeEnvironment`.
 */
import type { WebArenaTask } from '../tasks/schema';
import type { EvaluationHarness, TaskEvaluator } from './harnesses/contract';
import { buildEvaluator, evaluationHarness, type EvaluatorOptions } from './harnesses/registry';

export class EvaluatedTasks {
  private readonly tasks = new Map<string, WebArenaTask>();
  private readonly evaluators = new Map<string, TaskEvaluator>();
  /** The harness that scores them, chosen once. */
  readonly harness: EvaluationHarness;

  constructor(
    tasks: readonly WebArenaTask[],
    private readonly options: EvaluatorOptions,
  ) {
    this.harness = evaluationHarness(options.harness);
    for (const task of tasks) this.tasks.set(String(task.task_id), task);
  }

  get(taskId: number | string): WebArenaTask | undefined {
    return this.tasks.get(String(taskId));
  }

  /** The task and its evaluator; a task outside this set is an error. */
  require(taskId: number | string): { task: WebArenaTask; evaluator: TaskEvaluator } {
    const key = String(taskId);
    const task = this.tasks.get(key);
    if (!task) throw new Error(`task ${taskId} is not in this environment's task set`);
    let evaluator = this.evaluators.get(key);
    if (!evaluator) {
      evaluator = buildEvaluator(task, this.options, this.harness);
      this.evaluators.set(key, evaluator);
    }
    return { task, evaluator };
  }
}
