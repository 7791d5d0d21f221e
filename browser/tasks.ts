/**
 * The rollout task file of `webrl rollout`: a JSON array of
 * `{ task_id, intent, start_url, oracle?, expected_answer?, expected_url? }`. `start_url` may be relative
 * to the served fixture directory. WebArena-format tasks come in through an EpisodeEnvironment instead.
 */
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import type { OracleStep } from './contract';
import type { PolicyTask } from './policies/policy';

const elementMatcher = z.strictObject({
  tag: z.string().optional(),
  text: z.string().optional(),
  textIncludes: z.string().optional(),
  textMatches: z.string().optional(),
  attributes: z.record(z.string(), z.string()).optional(),
  after: z.string().optional(),
  label: z.string().optional(),
  enabled: z.boolean().optional(),
  nth: z.number().int().nonnegative().optional(),
});

/** The OracleStep type of the contract, as a schema (validates oracle plans read from files). */
export const oracleStepSchema: z.ZodType<OracleStep> = z.union([
  z.strictObject({ action: z.enum(['Click', 'Hover']), target: elementMatcher, until: elementMatcher.optional() }),
  z.strictObject({
    action: z.enum(['Type', 'Search', 'Select Dropdown Option']),
    target: elementMatcher,
    argument: z.string(),
    argumentFrom: z.string().optional(),
  }),
  z.strictObject({ action: z.enum(['Scroll Up', 'Scroll Down', 'Press Enter', 'Go Backward', 'Go Forward']), until: elementMatcher.optional() }),
  z.strictObject({ action: z.literal('exit'), message: z.string() }),
  z.strictObject({ action: z.literal('solve'), solver: z.string().min(1) }),
]);

const rolloutTask = z.strictObject({
  task_id: z.union([z.string(), z.number()]),
  intent: z.string().min(1),
  start_url: z.string().min(1),
  oracle: z.array(oracleStepSchema).optional(),
  /** Scored by the static environment: the answer must contain it (case-insensitive). */
  expected_answer: z.string().optional(),
  /** Scored by the static environment: the final URL must contain it. */
  expected_url: z.string().optional(),
});

export type RolloutTask = PolicyTask & z.infer<typeof rolloutTask>;

export function parseRolloutTasks(json: unknown): RolloutTask[] {
  const parsed = z.array(rolloutTask).safeParse(json);
  if (!parsed.success) throw new Error(`bad task file: ${z.prettifyError(parsed.error)}`);
  const ids = new Set<string>();
  for (const task of parsed.data) {
    if (ids.has(String(task.task_id))) throw new Error(`bad task file: task_id ${task.task_id} appears twice`);
    ids.add(String(task.task_id));
  }
  return parsed.data;
}

export async function loadRolloutTasks(file: string): Promise<RolloutTask[]> {
  return parseRolloutTasks(JSON.parse(await readFile(file, 'utf8')));
}
