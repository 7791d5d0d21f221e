/**
 * The judge behind `fuzzy_match` (and, for unachievable tasks, WebArena's `ua_match`). WebArena asks
 * an LLM whether an answer is correct given the reference; this module offers that judge over any
 * OpenAI-compatible chat endpoint (the project's remote-model client, with its retries and key
 * handling), and a deterministic judge for the embedded sites, whose references are exact facts from
 * seeded data.
 */
import type OpenAI from 'openai';
import type { ModelSecrets } from '../../config/secrets';
import { chatText, excerpt, type ChatOptions } from '../../models/remote/chatText';
import { createClient, describeEndpoint } from '../../browser/policies/openaiClient';
import { normalizeAnswer } from './textMatch';

export interface FuzzyJudge {
  /** `llm`: a language model grades, as WebArena does; `deterministic`: the embedded stand-in. */
  readonly kind: 'llm' | 'deterministic';
  /** Does `answer` convey the reference facts (given the task intent)? */
  matches(input: { intent: string; reference: string[]; answer: string }): Promise<boolean>;
  /** The task is unachievable for `reason`: does the `answer` report that, for the same reason? */
  sameUnachievableReason(input: { intent: string; reason: string; answer: string }): Promise<boolean>;
}

function looseForm(text: string): string {
  return normalizeAnswer(text)
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

const UNACHIEVABLE_MARKERS = [
  'n a',
  'not possible',
  'impossible',
  'cannot',
  'can t',
  'unable',
  'not available',
  'does not exist',
  'doesn t exist',
  'no such',
  'unachievable',
  'not found',
];

/**
 * Deterministic stand-in for the LLM judge (the embedded default): an answer matches when every
 * reference item occurs in it, ignoring case, punctuation and spacing; an unachievability report
 * is accepted when the answer states that the task cannot be done. It is stricter than an LLM about
 * paraphrase and blind to contradictions, which suits references that are literal seeded facts.
 */
export class DeterministicJudge implements FuzzyJudge {
  readonly kind = 'deterministic';

  async matches(input: Parameters<FuzzyJudge['matches']>[0]): Promise<boolean> {
    const answer = ` ${looseForm(input.answer)} `;
    return input.reference.every((item) => answer.includes(` ${looseForm(item)} `));
  }

  async sameUnachievableReason(input: Parameters<FuzzyJudge['sameUnachievableReason']>[0]): Promise<boolean> {
    const answer = ` ${looseForm(input.answer)} `;
    return UNACHIEVABLE_MARKERS.some((marker) => answer.includes(` ${marker} `));
  }
}

export interface LlmJudgeOptions extends ChatOptions {
  /** An already configured client (tests, shared connection pools); default one from `createClient`. */
  client?: OpenAI;
}

/** A judge reply that carries none of the verdict words the prompt asks for. */
export class JudgeReplyError extends Error {
  override name = 'JudgeReplyError';
}

/** WebArena's judge settings: greedy, room for a short justification before the verdict. */
const JUDGE_MAX_TOKENS = 768;
const SYSTEM = 'You are an impartial grader. Read the request and answer as it asks.';

/** The grading request for one reference: the labelled lines WebArena's judge reads, then the verdict words. */
export function fuzzyMatchPrompt(input: { intent: string; reference: string; answer: string }): string {
  return [
    "A teacher needs help grading a student's answer to a question. The student may word the answer differently from the reference; what counts is whether it means the same.",
    `question: ${input.intent}`,
    `reference answer: ${input.reference}`,
    "every 'N/A' here is a special token that stands for 'not achievable'",
    `student answer: ${input.answer}`,
    'End with your judgement: correct, incorrect or partially correct.',
  ].join('\n');
}

/** The request that compares a reported reason for giving up with the task's known one. */
export function unachievablePrompt(input: { intent: string; reason: string; answer: string }): string {
  return [
    `task: ${input.intent}`,
    `actual unachievable reason: ${input.reason}`,
    `reported unachievable reason: ${input.answer}`,
    'The task above cannot be done, for the actual reason given. Someone attempted it, did not succeed and reported why. ' +
      'Compare the reported reason with the actual one and decide whether they agree, even if only implicitly. ' +
      "Reply 'same' if they agree and 'different' if they do not.",
  ].join('\n');
}

/**
 * WebArena's LLM judge over an OpenAI-compatible chat endpoint. A fuzzy verdict fails on "partially
 * correct" or "incorrect" and passes on "correct"; an unachievability verdict fails on "different"
 * and passes on "same"; a reply with neither is an error (WebArena's harness stops there too).
 */
export class LlmJudge implements FuzzyJudge {
  readonly kind = 'llm';
  private readonly client: OpenAI;
  private readonly options: ChatOptions;

  constructor(options: LlmJudgeOptions) {
    const { client, ...chat } = options;
    this.options = { temperature: 0, maxTokens: JUDGE_MAX_TOKENS, ...chat };
    this.client = client ?? createClient(chat);
  }

  /** The endpoint and model, for messages (nothing secret). */
  describe(): string {
    return describeEndpoint(this.options);
  }

  private async ask(user: string, purpose: string): Promise<string> {
    return (await chatText(this.client, this.options, SYSTEM, user, purpose)).toLowerCase();
  }

  async matches(input: { intent: string; reference: string[]; answer: string }): Promise<boolean> {
    const reply = await this.ask(
      fuzzyMatchPrompt({ intent: input.intent, reference: input.reference.join(', '), answer: input.answer }),
      'fuzzy_match verdict',
    );
    if (reply.includes('partially correct') || reply.includes('incorrect')) return false;
    if (reply.includes('correct')) return true;
    throw new JudgeReplyError(`the judge ${this.describe()} answered no verdict (correct / incorrect / partially correct): "${excerpt(reply, 200)}"`);
  }

  async sameUnachievableReason(input: { intent: string; reason: string; answer: string }): Promise<boolean> {
    const reply = await this.ask(unachievablePrompt(input), 'ua_match verdict');
    if (reply.includes('different')) return false;
    if (reply.includes('same')) return true;
    throw new JudgeReplyError(`the judge ${this.describe()} answered no verdict (same / different): "${excerpt(reply, 200)}"`);
  }
}

/** What createJudge reads of `models.judge` (the config owns its schema). */
export type JudgeSettings =
  | { backend: 'embedded' }
  | { backend: 'chat'; baseUrl: string; model: string; timeoutMs: number; maxAttempts: number; retryDelayMs: number; maxTokens: number };

/** The judge `models.judge` names (absent or `embedded`: the deterministic judge); the key comes from the environment. */
export function createJudge(config: JudgeSettings | undefined, secrets: ModelSecrets = {}): FuzzyJudge {
  if (!config || config.backend === 'embedded') return new DeterministicJudge();
  return new LlmJudge({
    baseURL: config.baseUrl,
    model: config.model,
    timeoutMs: config.timeoutMs,
    maxAttempts: config.maxAttempts,
    retryDelayMs: config.retryDelayMs,
    maxTokens: config.maxTokens,
    ...(secrets.llmApiKey ? { apiKey: secrets.llmApiKey } : {}),
  });
}
