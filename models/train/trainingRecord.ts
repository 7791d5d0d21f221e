/**
 * Training records: what an external trainer (any language) reads as `{data}` when the actor is served
 * by a completions endpoint, one JSON object per line. The zod type here is the contract; its JSON
 * Schema comes from `webrl schema training-record`. A change to a field's meaning bumps the version.
 *
 *   kind 'step'  one step of a trajectory: the exact prompt text the completions actor sent and the
 *                text it received, the sparse reward, WebRL's Monte-Carlo return, the reference model's
 *                log-prob of the response and the replay filter's rank score
 *   kind 'orm'   one ORM example: the ORM prompt text and the answer YES / NO
 */
import { z } from 'zod';

export const TRAINING_RECORD_SCHEMA_VERSION = 1;

const common = {
  schemaVersion: z.literal(TRAINING_RECORD_SCHEMA_VERSION),
  campaignId: z.string(),
  phase: z.number().int().min(0),
  taskId: z.string(),
  traceId: z.string(),
};

export const trainingStepRecordSchema = z.strictObject({
  ...common,
  kind: z.literal('step'),
  /** `<traceId>:<step>` */
  id: z.string(),
  step: z.number().int().min(0),
  source: z.enum(['rollout', 'replay', 'demonstration']),
  /** The exact text the completions actor sent. */
  prompt: z.string(),
  /** The exact text it received. */
  response: z.string(),
  /** The prompt of step + 1 of the same trajectory; null on the last step. */
  nextPrompt: z.string().nullable(),
  /** Sparse: only the last step of a rewarded trajectory has 1. */
  reward: z.number(),
  done: z.boolean(),
  /** Monte-Carlo return as WebRL's scripts/process_data.py computes it (see monteCarloReturnWebRL). */
  mcReturn: z.number(),
  /** Sum of the reference model's token log-probs over the response tokens (a log-probability: <= 0). */
  refLogprob: z.number().max(0).nullable(),
  /** Number of response tokens refLogprob covers. */
  responseTokens: z.number().int().min(1).nullable(),
  /** exp(mean token log-prob of the response under the actor the phase trains from): the replay filter's score. */
  rank: z.number().nullable(),
  /** The structured state the prompt was rendered from (models/state.ts: intent, history, observation). */
  state: z.looseObject({ intent: z.string() }),
});

export const trainingOrmRecordSchema = z.strictObject({
  ...common,
  kind: z.literal('orm'),
  id: z.string(),
  /** The ORM prompt text. */
  prompt: z.string(),
  response: z.enum(['YES', 'NO']),
});

export const trainingRecordSchema = z.discriminatedUnion('kind', [trainingStepRecordSchema, trainingOrmRecordSchema]);

export type TrainingStepRecord = z.infer<typeof trainingStepRecordSchema>;
export type TrainingOrmRecord = z.infer<typeof trainingOrmRecordSchema>;
export type TrainingRecord = z.infer<typeof trainingRecordSchema>;

/**
 * The JSON Schema of a training record. Committed, for the Python trainer, as
 * trainers/torch/webrl_torch/training-record.schema.json (test/contract.test.ts checks it is current).
 */
export function trainingRecordJsonSchema(): object {
  return z.toJSONSchema(trainingRecordSchema, { target: 'draft-2020-12' });
}

/**
 * The Monte-Carlo return of step t of a trajectory of `steps` steps as WebRL's process_data.py computes
 * it: its build_policy_data gives every step the trajectory's score as `reward`, and add_mc_return sums
 * the discounted per-step rewards from step t on, so step t gets score * (1 + gamma + ... + gamma^(T-1-t)).
 */
export function monteCarloReturnWebRL(score: number, t: number, steps: number, gamma: number): number {
  let sum = 0;
  for (let j = steps - 1; j >= t; j--) sum = score + gamma * sum;
  return sum;
}

/** Where the training records of an experience dataset live: beside it. */
export function trainingRecordsKey(experienceKey: string): string {
  return experienceKey.replace(/\.jsonl$/, '') + '.records.jsonl';
}
