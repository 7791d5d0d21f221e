/**
 * The task sets the installed WebArena-Verified package ships: its 812 tasks
 * (`assets/dataset/webarena-verified.json`) and its subsets (`assets/dataset/subsets/<name>.json`, a
 * list of task ids), read where the evaluator's environment installed them. A task source names one
 * (`webarena-verified`, `webarena-verified-hard`) or is a subset file of its own.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { verifiedSubsetSchema } from '../../../tasks/verified';
import { sharedVerifiedEvaluator } from './client';

/** The full task set's name; any other packaged name is a subset of it. */
export const VERIFIED_FULL_SET = 'webarena-verified';
export const VERIFIED_TASK_SETS = [VERIFIED_FULL_SET, 'webarena-verified-hard'] as const;

async function packagedDataset(): Promise<{ tasks: { task_id?: unknown }[]; subsets: string }> {
  const assets = await (await sharedVerifiedEvaluator()).assets();
  return { tasks: JSON.parse(await readFile(assets.dataset, 'utf8')) as { task_id?: unknown }[], subsets: assets.subsets };
}

/** The package's tasks that a subset lists, in the subset's order; an id the package lacks is an error naming it. */
export async function selectSubset(subset: unknown, source: string): Promise<unknown[]> {
  const parsed = verifiedSubsetSchema.safeParse(subset);
  if (!parsed.success) throw new Error(`${source}: not a WebArena-Verified subset (expected { "task_ids": [...] }): ${parsed.error.issues[0]?.message}`);
  const { tasks } = await packagedDataset();
  const byId = new Map(tasks.map((task) => [task.task_id, task]));
  const missing = parsed.data.task_ids.filter((id) => !byId.has(id));
  if (missing.length) throw new Error(`${source}: task ids not in WebArena-Verified's task file: ${missing.join(', ')}`);
  return parsed.data.task_ids.map((id) => byId.get(id)!);
}

/** A packaged task set by name (the tasks as the package has them), or undefined for any other name. */
export async function packagedTaskSet(name: string): Promise<unknown[] | undefined> {
  if (!(VERIFIED_TASK_SETS as readonly string[]).includes(name) || existsSync(name)) return undefined;
  const { tasks, subsets } = await packagedDataset();
  if (name === VERIFIED_FULL_SET) return tasks;
  return selectSubset(JSON.parse(await readFile(join(subsets, `${name}.json`), 'utf8')), name);
}
