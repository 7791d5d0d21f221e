import { z } from 'zod';

/**
 * The fields every environment backend's settings share (after its own `backend` and section): each
 * backend's member of `campaign.environment` is `{ backend, <its section>, ...environmentFields }`
 * (env/backends/<name>/settings.ts), so the resolved config keeps one field order.
 */
export const environmentFields = {
  /** Seed of the sites' data and of the task splits generated from it. */
  worldSeed: z
    .number()
    .int()
    .min(0)
    .max(2 ** 31 - 1)
    .default(2411),
  /** Evaluate on a seeded sample of this many test tasks; 0 = the whole test split. */
  testTasks: z.number().int().min(0).default(0),
  /** SFT demonstrations from a seeded sample of this many train tasks; 0 = the whole train split. */
  demonstrationTasks: z.number().int().min(0).default(200),
  /** Steps per episode before it ends (WebRL: 30). */
  maxSteps: z.number().int().min(1).max(100).default(30),
  /** Wall-clock budget per episode. */
  episodeDeadlineSeconds: z.number().int().min(5).max(3600).default(300),
  /**
   * Share of episodes whose steps are stored as screenshots (for the HTML report), picked by a hash of
   * the episode's storage key, so a retry picks the same ones. Benchmarks set 0.
   */
  screenshotRate: z.number().min(0).max(1).default(0.1),
  /**
   * What the models read and the least wait before each observation (docs/webrl-fidelity.md). Unset
   * `profile`: `webrl` (the reference harness's annotator) with a completions actor, else `default`;
   * unset `minWaitMs`: 500 for `webrl` (the reference's wait), 0 for `default`.
   */
  observation: z
    .strictObject({
      profile: z.enum(['default', 'webrl']).optional(),
      minWaitMs: z.number().int().min(0).max(10_000).optional(),
    })
    .default({}),
};
