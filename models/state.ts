/**
 * What every model reads: the intent, the episode so far (raw outputs and their parsed actions) and the
 * current observation. For the ORM the observation is the final page. Of the observation only `url`
 * and `html` are read (htmlObservation.ts rebuilds elements and title from them), so states built from
 * stored traces (webrl.md §5 rows keep `url` and `html`) may leave `title` and `elements` out. The zod
 * schema validates states that arrive as data (training files) so a bad record fails with its path.
 * An outcome state's rounds may carry the target of their action (actionTarget.ts), kept as stored.
 */
import { z } from 'zod';
import type { Action, Observation } from '../browser/contract';
import { parseAction } from '../browser/grammar';
import type { HistoryRound } from '../browser/policies/policy';
import { actionTargetSchema, type ActionTarget } from './actionTarget';

/** A round as the models read it; outcome states (the ORM's input) also say what each action acted on. */
export interface ModelHistoryRound extends HistoryRound {
  target?: ActionTarget;
}

export interface ModelState {
  intent: string;
  history: readonly ModelHistoryRound[];
  observation: Observation;
}

const elementSchema = z.object({
  id: z.number().int().min(0),
  tag: z.string(),
  role: z.string().optional(),
  text: z.string(),
  fullText: z.string().optional(),
  attributes: z.record(z.string(), z.string()),
  bbox: z.tuple([z.number(), z.number(), z.number(), z.number()]),
  value: z.string().optional(),
  checked: z.boolean().optional(),
  selectedOption: z.string().optional(),
  options: z.array(z.string()).optional(),
});

export const observationSchema = z.object({
  url: z.string(),
  title: z.string().default(''),
  html: z.string(),
  elements: z.array(elementSchema).default([]),
});

/** A history round is a raw output or {response, action}; the action is always re-parsed from the response, so stored and live states featurize alike. */
const historyRoundSchema = z.union([
  z.string().transform((response) => ({ response, action: undefined })),
  z.object({ response: z.string(), action: z.unknown().optional(), target: actionTargetSchema.optional() }),
]);

export const modelStateSchema = z
  .object({
    intent: z.string(),
    history: z.array(historyRoundSchema).default([]),
    observation: observationSchema,
  })
  .transform((state): ModelState => ({
    intent: state.intent,
    history: state.history.map((round) => {
      const parsed: ModelHistoryRound = { response: round.response, action: parsedAction(round.response) };
      if ('target' in round && round.target) parsed.target = round.target;
      return parsed;
    }),
    observation: state.observation,
  }));

/** A raw output's action, null when it does not parse. */
export function parsedAction(response: string): Action | null {
  const parsed = parseAction(response);
  return parsed.ok ? parsed.action : null;
}
