/**
 * Loads task files in WebArena's format or WebArena-Verified's (detected per task: `start_urls` or an
 * `eval` list; env/tasks/verified.ts), a JSON array of tasks or one task object; validates every
 * task, builds every evaluator, and counts tasks per site and per eval type. Any problem is a
 * `TaskConfigError` naming the task id and the field; `validateTaskFile` reports every problem of
 * every task at once, the other loaders throw the first.
 */
import { readFile, stat } from 'node:fs/promises';
import type { TaskEvaluator } from '../evaluators/harnesses/contract';
import type { HarnessName } from '../evaluators/harnesses/names';
import { evaluationHarness, harnessOfTasks, type EvaluatorOptions } from '../evaluators/harnesses/registry';
import { TaskConfigError, formatZodPath, webArenaTaskSchema, type WebArenaTask } from './schema';
import { packagedTaskSet, selectSubset } from '../evaluators/harnesses/verified/dataset';
import { fromVerified, isSubset, isVerifiedItem, verifiedTaskSchema } from './verified';

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

/** Every task that passes the schema, and every problem of those that do not (all their issues). */
export function parseTasksReport(data: unknown): { tasks: WebArenaTask[]; problems: TaskConfigError[] } {
  const items = Array.isArray(data) ? data : [data];
  const seen = new Set<string>();
  const tasks: WebArenaTask[] = [];
  const problems: TaskConfigError[] = [];
  items.forEach((item, index) => {
    const rawId = (item as { task_id?: unknown } | null)?.task_id;
    const id = typeof rawId === 'number' || typeof rawId === 'string' ? rawId : `#${index}`;
    const verified = isVerifiedItem(item) ? verifiedTaskSchema.safeParse(item) : undefined;
    if (verified && !verified.success) {
      for (const issue of verified.error.issues) problems.push(new TaskConfigError(id, formatZodPath(issue.path) || '(task)', issue.message));
      return;
    }
    const parsed = webArenaTaskSchema.safeParse(verified ? fromVerified(item as Record<string, unknown>, verified.data) : item);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) problems.push(new TaskConfigError(id, formatZodPath(issue.path) || '(task)', issue.message));
      return;
    }
    const key = String(parsed.data.task_id);
    if (seen.has(key)) {
      problems.push(new TaskConfigError(id, 'task_id', 'duplicate task id'));
      return;
    }
    seen.add(key);
    tasks.push(parsed.data);
  });
  return { tasks, problems };
}

export function parseTasks(data: unknown): WebArenaTask[] {
  const { tasks, problems } = parseTasksReport(data);
  if (problems[0]) throw problems[0];
  return tasks;
}

/** The largest task file read by default (WebArena's 812-task test set is about 1 MB). */
export const DEFAULT_MAX_TASK_FILE_BYTES = 64 * 1024 * 1024;

/**
 * Reads a task file's JSON. A file over `maxBytes` is refused before it is read: a whole file is
 * parsed at once, and an oversized one would hold the worker's memory for nothing. A WebArena-Verified
 * subset file (`{ task_ids }`) reads as the installed package's tasks it lists, and the names
 * `webarena-verified` and `webarena-verified-hard` as the package's own sets.
 */
async function readTaskJson(path: string, maxBytes = DEFAULT_MAX_TASK_FILE_BYTES): Promise<unknown> {
  const packaged = await packagedTaskSet(path);
  if (packaged) return packaged;
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
  return isSubset(data) ? selectSubset(data, path) : data;
}

/** Reads and validates a task file; the first invalid task throws. */
export async function readTaskFile(path: string, options: { maxBytes?: number } = {}): Promise<WebArenaTask[]> {
  return parseTasks(await readTaskJson(path, options.maxBytes));
}

export function countTasks(tasks: readonly WebArenaTask[]): TaskCounts {
  const bySite: Record<string, number> = {};
  const byEvalType: Record<string, number> = {};
  for (const task of tasks) {
    for (const site of task.sites) bySite[site] = (bySite[site] ?? 0) + 1;
    // A WebArena-Verified task counts under its evaluators' names.
    const types = task.verified ? new Set((task.verified.eval as { evaluator: string }[]).map((entry) => entry.evaluator)) : task.eval.eval_types;
    for (const type of types) byEvalType[type] = (byEvalType[type] ?? 0) + 1;
  }
  return { total: tasks.length, bySite, byEvalType };
}

/** Builds every task's evaluator it can under the harness `options` names, and collects every problem of the others. */
export function checkTasks(tasks: readonly WebArenaTask[], options: EvaluatorOptions): { tasks: LoadedTask[]; problems: TaskConfigError[] } {
  const harness = evaluationHarness(options.harness);
  const loaded: LoadedTask[] = [];
  const problems: TaskConfigError[] = [];
  for (const config of tasks) {
    const checked = harness.checkTask(config, options);
    problems.push(...checked.problems);
    if (checked.evaluator && checked.problems.length === 0) loaded.push({ config, evaluator: checked.evaluator });
  }
  return { tasks: loaded, problems };
}

/** Builds every task's evaluator; the first problem throws. */
export function buildTasks(tasks: readonly WebArenaTask[], options: EvaluatorOptions): LoadedTask[] {
  const { tasks: loaded, problems } = checkTasks(tasks, options);
  if (problems[0]) throw problems[0];
  return loaded;
}

/** Reads, validates and builds a task file in one go; the first problem throws. */
export async function loadTaskFile(path: string, options: EvaluatorOptions & { maxBytes?: number }): Promise<{ tasks: LoadedTask[]; counts: TaskCounts }> {
  const configs = await readTaskFile(path, options.maxBytes === undefined ? {} : { maxBytes: options.maxBytes });
  return { tasks: buildTasks(configs, options), counts: countTasks(configs) };
}

export interface TaskFileReport {
  /** Tasks in the file (every item of its array). */
  total: number;
  /** The valid tasks, evaluators built. */
  tasks: LoadedTask[];
  /** Every problem of every invalid task, in file order. */
  problems: TaskConfigError[];
  /** How many tasks have at least one problem. */
  invalid: number;
  /** Counts over the tasks that passed the schema. */
  counts: TaskCounts;
  /** The harness the tasks were checked under. */
  harness: HarnessName;
}

/**
 * Reads a task file and checks every task, reporting all problems at once. A file that cannot be
 * read or is not JSON still throws.
 */
export async function validateTaskFile(path: string, options: EvaluatorOptions & { maxBytes?: number }): Promise<TaskFileReport> {
  const data = await readTaskJson(path, options.maxBytes);
  const parsed = parseTasksReport(data);
  const harness = options.harness ?? harnessOfTasks(parsed.tasks).name;
  const built = checkTasks(parsed.tasks, { ...options, harness });
  const problems = [...parsed.problems, ...built.problems];
  return {
    total: Array.isArray(data) ? data.length : 1,
    tasks: built.tasks,
    problems,
    invalid: new Set(problems.map((p) => String(p.taskId))).size,
    counts: countTasks(parsed.tasks),
    harness,
  };
}
