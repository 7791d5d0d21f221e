/**
 * Loads WebArena-format task files (a JSON array of tasks, or one task object), validates every
 * task, builds every evaluator, and counts tasks per site and per eval type. Any problem is a
 * `TaskConfigError` naming the task id and the field.
 */
import { readFile, stat } from 'node:fs/promises';
import { buildEvaluator, type EvaluatorOptions, type TaskEvaluator } from '../evaluators/evaluator';
import { TaskConfigError, formatZodPath, webArenaTaskSchema, type WebArenaTask } from './schema';

export interface LoadedTask {
  config: WebArenaTask;
  evaluator: TaskEvaluator;
}

export interface TaskCounts {
  total: number;
  /** A task counts once under each site it lists. */
  bySite: Record<string, number>;
  /** A task counts once under each of its eval types. */
  byEvalType: Record<string, number>;
}

export function parseTasks(data: unknown): WebArenaTask[] {
  const items = Array.isArray(data) ? data : [data];
  const seen = new Set<string>();
  return items.map((item, index) => {
    const rawId = (item as { task_id?: unknown } | null)?.task_id;
    const id = typeof rawId === 'number' || typeof rawId === 'string' ? rawId : `#${index}`;
    const parsed = webArenaTaskSchema.safeParse(item);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new TaskConfigError(id, formatZodPath(issue?.path ?? []) || '(task)', issue?.message ?? 'invalid task');
    }
    const key = String(parsed.data.task_id);
    if (seen.has(key)) throw new TaskConfigError(id, 'task_id', 'duplicate task id');
    seen.add(key);
    return parsed.data;
  });
}

/** The largest task file read by default (WebArena's 812-task test set is about 1 MB). */
export const DEFAULT_MAX_TASK_FILE_BYTES = 64 * 1024 * 1024;

/**
 * Reads and validates a task file. A file over `maxBytes` is refused before it is read: a whole
 * file is parsed at once, and an oversized one would hold the worker's memory for nothing.
 */
export async function readTaskFile(path: string, options: { maxBytes?: number } = {}): Promise<WebArenaTask[]> {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_TASK_FILE_BYTES;
  const { size } = await stat(path);
  if (size > maxBytes) {
    throw new Error(`${path} is ${size} bytes, over the ${maxBytes}-byte limit for a task file; split it, or raise the limit (--max-bytes)`);
  }
  const text = await readFile(path, 'utf8');
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new Error(`${path}: not valid JSON: ${(error as Error).message}`);
  }
  return parseTasks(data);
}

export function countTasks(tasks: readonly WebArenaTask[]): TaskCounts {
  const bySite: Record<string, number> = {};
  const byEvalType: Record<string, number> = {};
  for (const task of tasks) {
    for (const site of task.sites) bySite[site] = (bySite[site] ?? 0) + 1;
    for (const type of task.eval.eval_types) byEvalType[type] = (byEvalType[type] ?? 0) + 1;
  }
  return { total: tasks.length, bySite, byEvalType };
}

/** Builds every task's evaluator; the first failure throws. */
export function buildTasks(tasks: readonly WebArenaTask[], options: EvaluatorOptions): LoadedTask[] {
  return tasks.map((config) => ({ config, evaluator: buildEvaluator(config, options) }));
}

/** Reads, validates and builds a task file in one go. */
export async function loadTaskFile(
  path: string,
  options: EvaluatorOptions & { maxBytes?: number },
): Promise<{ tasks: LoadedTask[]; counts: TaskCounts }> {
  const configs = await readTaskFile(path, options.maxBytes === undefined ? {} : { maxBytes: options.maxBytes });
  return { tasks: buildTasks(configs, options), counts: countTasks(configs) };
}
