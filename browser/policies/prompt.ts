/**
 * The completion prompt of the released WebRL checkpoints (webrl.md §4):
 *
 *   Task Instruction: {intent}\n\n{history}Round {i}\n\n<|eot_id|><|start_header_id|>user<|end_header_id|>\n
 *   {observation}\n\n<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n
 *
 * History rounds repeat that pattern with the past raw outputs after the assistant header; their
 * observation is the intent for round 0 and the literal `** Simplified html **` afterwards. The current
 * observation is cut so that history plus observation stay within 16384 - 512 characters.
 */
export const PROMPT_CHAR_BUDGET = 16384 - 512;
export const STOP_TOKEN = '<|eot_id|>';
/** The reference harness's generation length: long `exit(message=...)` answers fit. */
export const DEFAULT_MAX_TOKENS = 2048;
export const PAST_OBSERVATION = '** Simplified html **';

const USER_HEADER = '<|eot_id|><|start_header_id|>user<|end_header_id|>\n';
const ASSISTANT_HEADER = '<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n';

function round(index: number, observation: string): string {
  return `Round ${index}\n\n${USER_HEADER}${observation}\n\n${ASSISTANT_HEADER}`;
}

/** What the trace's `prompt` field holds for a round: the stub that stands for its observation later on. */
export function pastObservation(index: number, intent: string): string {
  return index === 0 ? intent : PAST_OBSERVATION;
}

function historyText(intent: string, pastResponses: readonly string[]): string {
  return pastResponses.map((response, i) => `${round(i, pastObservation(i, intent))}${response}\n\n`).join('');
}

/** The characters of the current observation the prompt keeps after this history. */
export function observationRoom(intent: string, pastResponses: readonly string[]): number {
  return Math.max(0, PROMPT_CHAR_BUDGET - historyText(intent, pastResponses).length);
}

export function buildPrompt(intent: string, pastResponses: readonly string[], html: string): string {
  const room = observationRoom(intent, pastResponses);
  const observation = html.length > room ? html.slice(0, room) : html;
  return `Task Instruction: ${intent}\n\n${historyText(intent, pastResponses)}${round(pastResponses.length, observation)}`;
}
