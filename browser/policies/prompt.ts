/**
 * The completion prompt of the released WebRL checkpoints (webrl.md §4):
 *
 *   Task Instruction: {intent}\n\n{history}Round {i}\n\n<|eot_id|><|start_header_id|>user<|end_header_id|>\n
 *   {observation}\n\n<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n
 *
 * History rounds repeat that pattern with the past raw outputs after the assistant header; their
 * observation is the intent for round 0 and the literal `** Simplified html **` afterwards. The current
 * observation is cut so that history plus observation stay within 16384 - 512 characters. The text
 * comes from the templates both languages read (promptTemplates.ts).
 */
import { fillTemplate, PROMPT_TEMPLATES } from './promptTemplates';

export const PROMPT_CHAR_BUDGET = PROMPT_TEMPLATES.charBudget;
export const STOP_TOKEN = '<|eot_id|>';
/** The reference harness's generation length: long `exit(message=...)` answers fit. */
export const DEFAULT_MAX_TOKENS = 2048;
export const PAST_OBSERVATION = PROMPT_TEMPLATES.actor.pastObservation;

const { actor } = PROMPT_TEMPLATES;

function round(index: number, observation: string): string {
  return fillTemplate(actor.round, { index, observation });
}

/** What the trace's `prompt` field holds for a round: the stub that stands for its observation later on. */
export function pastObservation(index: number, intent: string): string {
  return index === 0 ? intent : PAST_OBSERVATION;
}

function historyText(intent: string, pastResponses: readonly string[]): string {
  return pastResponses.map((response, i) => fillTemplate(actor.pastRound, { round: round(i, pastObservation(i, intent)), response })).join('');
}

/** The characters of the current observation the prompt keeps after this history. */
export function observationRoom(intent: string, pastResponses: readonly string[]): number {
  return Math.max(0, PROMPT_CHAR_BUDGET - historyText(intent, pastResponses).length);
}

export function buildPrompt(intent: string, pastResponses: readonly string[], html: string): string {
  const room = observationRoom(intent, pastResponses);
  const observation = html.length > room ? html.slice(0, room) : html;
  return fillTemplate(actor.prompt, { intent, history: historyText(intent, pastResponses), round: round(pastResponses.length, observation) });
}
