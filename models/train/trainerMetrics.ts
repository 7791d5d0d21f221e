/**
 * What a training job did, beside its checkpoint: the optimizer steps it took and the batches it skipped
 * (no loss row: no step), the actor-webrl rows that had a loss (positive advantage) by where they came
 * from, and the KL per response token to the reference. The torch trainer writes it into `{out}` as
 * `training-metrics.json`; the embedded trainer fills what it knows. The phase manifest carries the
 * actor's (campaign/manifest.ts) and `webrl campaign report` shows it.
 */
import { z } from 'zod';

/** The file an external trainer may write into `{out}` (optional: without it the report says n/a). */
export const TRAINER_METRICS_FILE = 'training-metrics.json';

const count = z.number().int().nonnegative();

export const trainerMetricsSchema = z.strictObject({
  objective: z.string(),
  /** Training rows the job read. */
  rows: count,
  optimizerSteps: count,
  /** Batches without a loss row, which took no optimizer step; null: the trainer does not tell (it steps on every batch). */
  skippedSteps: count.nullable(),
  /**
   * actor-webrl: rows with a positive advantage, by source: this phase's successful trajectories, its other
   * rollouts, the replay buffer, the demonstrations; null for other objectives or a trainer that does not tell.
   */
  positiveRows: z.strictObject({ success: count, rollout: count, replay: count, demonstration: count }).nullable(),
  /** actor-webrl: mean and largest |KL| per response token to the reference over the steps taken; null when not measured. */
  klPerToken: z.strictObject({ mean: z.number(), maxAbs: z.number() }).nullable(),
});

export type TrainerMetrics = z.infer<typeof trainerMetricsSchema>;

/** Where a checkpoint's metrics are kept in the store, whichever trainer wrote the checkpoint. */
export function trainerMetricsKey(checkpointKey: string): string {
  return `${checkpointKey.replace(/\/+$/, '')}.training-metrics.json`;
}

/**
 * The metrics an external trainer wrote into `{out}` (read from under the checkpoint's key): null when it
 * wrote none; a file that does not match is a problem named by file and field (the model stays good, the
 * report says n/a).
 */
export function parseTrainerMetrics(value: unknown, where: string): { metrics: TrainerMetrics | null; problem: string | null } {
  if (value === undefined) return { metrics: null, problem: null };
  const parsed = trainerMetricsSchema.safeParse(value);
  if (parsed.success) return { metrics: parsed.data, problem: null };
  const issue = parsed.error.issues[0]!;
  return { metrics: null, problem: `${where} ${issue.path.join('.') || '(file)'}: ${issue.message}` };
}
