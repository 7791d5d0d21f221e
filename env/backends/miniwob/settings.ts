/**
 * The miniwob backend's member of `campaign.environment`: which task types, which seeds make the train
 * and test splits (each task is a task type and a seed), and how long an episode may run.
 */
import { z } from 'zod';
import { environmentFields } from '../environmentFields';
import type { ConfigIssue, ConfigIssueInput } from '../contract';
import { EXCLUDED_TASK_TYPES, isTextTaskType } from './catalog';
import { MINIWOB_VERSION } from './package';

/** Seeds in one split at most: each seed is one page load per task type when the split is loaded. */
export const MAX_SEEDS_PER_SPLIT = 10_000;

/** Seeds `from` (inclusive) to `to` (exclusive). */
const seedRange = z
  .strictObject({
    from: z
      .number()
      .int()
      .min(0)
      .max(2 ** 31 - 1),
    to: z
      .number()
      .int()
      .min(1)
      .max(2 ** 31),
  })
  .refine((range) => range.to > range.from, { message: 'seed range is empty: to must be greater than from' })
  .refine((range) => range.to - range.from <= MAX_SEEDS_PER_SPLIT, {
    message: `at most ${MAX_SEEDS_PER_SPLIT} seeds per split (each seed loads one page per task type before the campaign starts)`,
  });
export type SeedRange = z.output<typeof seedRange>;

export const MiniwobSectionSchema = z
  .strictObject({
    /**
     * Task types (page names such as `click-button`) from the text subset (env/backends/miniwob/catalog.ts);
     * empty: every one of them. A name the package does not have, or one left out of the subset, is an error.
     */
    taskTypes: z.array(z.string().min(1)).default([]),
    /** The seeds of the train split and of the test split: every task type once per seed. They must not overlap. */
    seeds: z
      .strictObject({
        train: seedRange.default({ from: 0, to: 10 }),
        test: seedRange.default({ from: 1000, to: 1003 }),
      })
      .default({ train: { from: 0, to: 10 }, test: { from: 1000, to: 1003 } }),
    /**
     * The episode's time limit: `page` keeps each page's own (`core.EPISODE_MAX_TIME`, 10 to 30 s), a
     * number of seconds replaces it (an LLM actor takes longer per step than MiniWoB++'s limits assume).
     * An episode that runs out of time ends on the page with reward -1: a recorded failure.
     */
    timeLimit: z
      .union([z.literal('page'), z.number().int().min(1).max(3600)], {
        error: "expected 'page' or a whole number of seconds from 1 to 3600 (a number, not text)",
      })
      .default('page'),
  })
  .default({ taskTypes: [], seeds: { train: { from: 0, to: 10 }, test: { from: 1000, to: 1003 } }, timeLimit: 'page' });
export type MiniwobSection = z.output<typeof MiniwobSectionSchema>;

export const miniwobSettings = z.strictObject({
  /** `miniwob`: MiniWoB++'s task pages (PyPI `miniwob` 1.1.0), served by each browser worker. */
  backend: z.literal('miniwob'),
  miniwob: MiniwobSectionSchema,
  ...environmentFields,
});
export type MiniwobSettings = z.output<typeof miniwobSettings>;

const show = (range: SeedRange) => `[${range.from}, ${range.to})`;

/**
 * The train and test seed ranges must not share a seed (a test task would be one the actor trained on);
 * every task type must be one of the text subset's, and listed once (a split would hold a task twice).
 */
export function miniwobConfigIssues(_config: ConfigIssueInput, settings: MiniwobSettings): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const { train, test } = settings.miniwob.seeds;
  if (train.from < test.to && test.from < train.to) {
    issues.push({ path: ['campaign', 'environment', 'miniwob', 'seeds'], message: `the train seeds ${show(train)} and the test seeds ${show(test)} overlap` });
  }
  settings.miniwob.taskTypes.forEach((name, i) => {
    const first = settings.miniwob.taskTypes.indexOf(name);
    if (first !== i) {
      issues.push({ path: ['campaign', 'environment', 'miniwob', 'taskTypes', i], message: `task type ${name} is listed twice (also at [${first}])` });
      return;
    }
    if (isTextTaskType(name)) return;
    const excluded = EXCLUDED_TASK_TYPES[name];
    const message = excluded ? `task type ${name} is left out of the text subset: ${excluded}` : `miniwob ${MINIWOB_VERSION} has no task type ${name}`;
    issues.push({ path: ['campaign', 'environment', 'miniwob', 'taskTypes', i], message });
  });
  return issues;
}
