/**
 * Training data, one JSON object per line (or inline), validated on load so a bad record fails with its
 * line number and field:
 *
 *   actor-sft     { state, response }                                  a demonstration (state, action)
 *   actor-webrl   { state, response, nextState | null, reward, mcReturn }   one step of a trajectory
 *   critic        { state, mcReturn }                                   label: mcReturn > 0
 *   orm           { state, success }                                    state = the episode's last state
 *
 * `state` is a ModelState (intent, history, observation); `response` a raw output in the WebRL grammar.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { modelStateSchema, type ModelState } from '../state';
import type { Objective } from './trainerContract';

export interface DemonstrationExample {
  state: ModelState;
  response: string;
}

export interface WebRLStepExample {
  state: ModelState;
  response: string;
  /** The state after the action; null after the last step. */
  nextState: ModelState | null;
  reward: number;
  mcReturn: number;
}

export interface ValueExample {
  state: ModelState;
  mcReturn: number;
}

export interface OutcomeExample {
  state: ModelState;
  success: boolean;
}

export interface ExamplesByObjective {
  'actor-sft': DemonstrationExample;
  'actor-webrl': WebRLStepExample;
  critic: ValueExample;
  orm: OutcomeExample;
}

/** Examples tagged with their objective, so consumers switch on one field. */
export type ObjectiveData = { [O in Objective]: { objective: O; examples: ExamplesByObjective[O][] } }[Objective];

const schemas = {
  'actor-sft': z.object({ state: modelStateSchema, response: z.string() }),
  'actor-webrl': z.object({
    state: modelStateSchema,
    response: z.string(),
    nextState: modelStateSchema.nullable(),
    reward: z.number(),
    mcReturn: z.number(),
  }),
  critic: z.object({ state: modelStateSchema, mcReturn: z.number() }),
  orm: z.object({ state: modelStateSchema, success: z.boolean() }),
} satisfies Record<Objective, z.ZodType>;

/** Where a job's examples come from: a JSONL file, or the records themselves. */
export type ExampleSource = { path: string } | { records: readonly unknown[] };

export function parseExamples(objective: Objective, records: readonly unknown[], origin = 'examples'): ObjectiveData {
  const examples = records.map((record, i) => {
    const parsed = schemas[objective].safeParse(record);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new Error(`${origin}: record ${i + 1}: ${issue?.path.join('.') || '(record)'}: ${issue?.message ?? 'invalid'}`);
    }
    return parsed.data;
  });
  // Each record was validated by its objective's schema, so the pairing holds.
  return { objective, examples } as ObjectiveData;
}

export interface LoadedExamples {
  data: ObjectiveData;
  /** sha256 of the data as read, for the job fingerprint. */
  digest: string;
}

export async function loadExamples(objective: Objective, source: ExampleSource): Promise<LoadedExamples> {
  if ('records' in source) {
    const digest = createHash('sha256').update(JSON.stringify(source.records)).digest('hex');
    return { data: parseExamples(objective, source.records), digest };
  }
  const text = await readFile(source.path, 'utf8');
  const lines = text.split('\n').filter((line) => line.trim() !== '');
  const records = lines.map((line, i) => {
    try {
      return JSON.parse(line) as unknown;
    } catch (error) {
      throw new Error(`${source.path}: line ${i + 1} is not JSON: ${(error as Error).message}`);
    }
  });
  return { data: parseExamples(objective, records, source.path), digest: createHash('sha256').update(text).digest('hex') };
}
