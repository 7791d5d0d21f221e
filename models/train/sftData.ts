/**
 * An SFT data file for phase 0's actor (`models.actor.sftData`), read into (prompt, response) pairs in the
 * actor's prompt format, every problem of the file listed with where it is:
 *
 *   webrl-sharegpt     WebRL's `web_policy_sft.json` as LLaMA-Factory reads it (its dataset_info.json:
 *                      formatting `sharegpt`, messages in `conversations`): a JSON array of
 *                      {conversations: [{from: system | human | gpt, value}, ...]}, turns alternating
 *                      human / gpt after an optional system turn and ending with gpt. Each gpt turn is a
 *                      target. With webrl-llama3 an entry is one human turn and one gpt turn, the human turn
 *                      being the released prompt itself; with chat-template the turns before each target are
 *                      rendered by the model's template.
 *   training-records   this project's training records (JSONL, models/train/trainingRecord.ts), kind step:
 *                      their prompt and response as they are
 */
import { z } from 'zod';
import { firstProblems } from '../../config/errors';
import { trainingRecordSchema } from './trainingRecord';

export const SFT_DATA_FORMATS = ['webrl-sharegpt', 'training-records'] as const;
export type SftDataFormat = (typeof SFT_DATA_FORMATS)[number];

export interface SftPair {
  /** Where the pair came from in the file (`entry 3, turn 2`, `line 7`). */
  where: string;
  prompt: string;
  response: string;
}

/** Renders a conversation (before a target) as the actor's prompt; undefined for webrl-llama3. */
export type ChatRenderer = (messages: { role: 'system' | 'user' | 'assistant'; content: string }[]) => string;

export class SftDataError extends Error {
  override name = 'SftDataError';
  constructor(
    readonly source: string,
    readonly problems: string[],
  ) {
    super(
      `${source}: ${problems.length} problem(s):\n${firstProblems(problems)
        .map((p) => `  ${p}`)
        .join('\n')}`,
    );
  }
}

/** Whether a tokenizer can encode the text: a lone UTF-16 surrogate (a `\\ud800` escape in JSON) it cannot; a pair is one code point. */
const wellFormed = (value: string) => !/\p{Cs}/u.test(value);
const text = z.string().refine(wellFormed, { message: 'holds a lone UTF-16 surrogate (a broken \\uD800-\\uDFFF escape), which no tokenizer encodes' });
const turnSchema = z.looseObject({ from: z.enum(['system', 'human', 'gpt']), value: text });
const entrySchema = z.looseObject({
  conversations: z
    .array(turnSchema, { error: (issue) => (issue.input === undefined ? 'missing: each entry needs conversations: [{from, value}, ...]' : undefined) })
    .min(2, { error: 'expected at least two turns (a human turn and the gpt turn it trains)' }),
});
const ROLES = { system: 'system', human: 'user', gpt: 'assistant' } as const;

const issues = (where: string, error: z.ZodError) =>
  error.issues.map((issue) => `${where}${issue.path.length ? ` ${issue.path.join('.')}` : ''}: ${issue.message}`);

function sharegptPairs(text: string, render: ChatRenderer | undefined, problems: string[]): SftPair[] {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    problems.push(`not JSON: ${(error as Error).message}`);
    return [];
  }
  if (!Array.isArray(json)) {
    problems.push('expected a JSON array of {conversations: [...]} entries');
    return [];
  }
  const pairs: SftPair[] = [];
  json.forEach((raw, i) => {
    const where = `[${i}]`;
    const parsed = entrySchema.safeParse(raw);
    if (!parsed.success) return void problems.push(...issues(where, parsed.error));
    const turns = parsed.data.conversations;
    const blank = turns.findIndex((turn) => turn.from === 'human' && turn.value.trim() === '');
    if (blank >= 0) return void problems.push(`${where} conversations.${blank}.value: the human turn (the prompt) is empty`);
    const start = turns[0]!.from === 'system' ? 1 : 0;
    const misplaced = turns.findIndex((turn, t) => t >= start && turn.from !== ((t - start) % 2 === 0 ? 'human' : 'gpt'));
    if (misplaced >= 0)
      return void problems.push(
        `${where} conversations.${misplaced}.from: expected ${(misplaced - start) % 2 === 0 ? 'human' : 'gpt'} (turns alternate human / gpt after an optional system turn)`,
      );
    if (turns.at(-1)!.from !== 'gpt') return void problems.push(`${where} conversations.${turns.length - 1}.from: the last turn must be gpt (the target)`);
    if (!render) {
      if (turns.length !== 2 || start !== 0)
        return void problems.push(
          `${where} conversations: with promptFormat webrl-llama3 an entry is one human turn (the released prompt) and one gpt turn; it has ${turns.length} turns`,
        );
      pairs.push({ where, prompt: turns[0]!.value, response: turns[1]!.value });
      return;
    }
    const messages = turns.map((turn) => ({ role: ROLES[turn.from], content: turn.value }));
    messages.forEach((message, t) => {
      if (message.role === 'assistant') pairs.push({ where: `${where} turn ${t}`, prompt: render(messages.slice(0, t)), response: message.content });
    });
  });
  return pairs;
}

function recordPairs(text: string, problems: string[]): SftPair[] {
  const pairs: SftPair[] = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    const where = `line ${i + 1}`;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch (error) {
      return void problems.push(`${where}: not JSON: ${(error as Error).message}`);
    }
    const parsed = trainingRecordSchema.safeParse(json);
    if (!parsed.success) return void problems.push(...issues(where, parsed.error));
    if (parsed.data.kind !== 'step') return void problems.push(`${where} kind: expected "step" (an orm record trains no actor)`);
    for (const field of ['prompt', 'response'] as const) {
      if (!wellFormed(parsed.data[field])) return void problems.push(`${where} ${field}: holds a lone UTF-16 surrogate, which no tokenizer encodes`);
    }
    if (parsed.data.prompt.trim() === '') return void problems.push(`${where} prompt: the prompt is empty`);
    pairs.push({ where, prompt: parsed.data.prompt, response: parsed.data.response });
  });
  return pairs;
}

/**
 * The file's (prompt, response) pairs; throws an SftDataError listing every problem (an empty file is
 * one). `render` is the chat template's renderer for chat-template actors, undefined for webrl-llama3.
 */
export function readSftData(source: string, text: string, format: SftDataFormat, render: ChatRenderer | undefined): SftPair[] {
  const problems: string[] = [];
  // A byte order mark (Windows editors write one) is not part of the JSON: read past it.
  const body = text.startsWith('\uFEFF') ? text.slice(1) : text;
  const pairs = format === 'webrl-sharegpt' ? sharegptPairs(body, render, problems) : recordPairs(body, problems);
  for (const pair of pairs) if (pair.response.trim() === '') problems.push(`${pair.where}: the target (response) is empty`);
  // The same pair twice weighs it double in training without anyone having chosen that.
  const seen = new Map<string, string>();
  for (const pair of pairs) {
    const key = JSON.stringify([pair.prompt, pair.response]);
    const first = seen.get(key);
    if (first === undefined) seen.set(key, pair.where);
    else problems.push(`${pair.where}: the same prompt and response as ${first} (a duplicate entry)`);
  }
  if (problems.length === 0 && pairs.length === 0) problems.push('no (prompt, response) pairs');
  if (problems.length) throw new SftDataError(source, problems);
  return pairs;
}
