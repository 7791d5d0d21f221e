/**
 * The judge behind `fuzzy_match`. WebArena asks an LLM whether an answer is correct given the
 * reference; this module offers that judge over any OpenAI-compatible chat endpoint, and a
 * deterministic judge for the embedded sites, whose references are exact facts from seeded data.
 */
import OpenAI from 'openai';
import { normalizeAnswer } from './text-match';

export interface FuzzyJudge {
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

const UNACHIEVABLE_MARKERS = ['n a', 'not possible', 'impossible', 'cannot', 'can t', 'unable', 'not available', 'does not exist', 'doesn t exist', 'no such', 'unachievable', 'not found'];

/**
 * Deterministic stand-in for the LLM judge (the embedded default): an answer matches when every
 * reference item occurs in it, ignoring case, punctuation and spacing; an unachievability report
 * is accepted when the answer states that the task cannot be done. It is stricter than an LLM about
 * paraphrase and blind to contradictions, which suits references that are literal seeded facts.
 */
export class DeterministicJudge implements FuzzyJudge {
  async matches(input: Parameters<FuzzyJudge['matches']>[0]): Promise<boolean> {
    const answer = ` ${looseForm(input.answer)} `;
    return input.reference.every((item) => answer.includes(` ${looseForm(item)} `));
  }

  async sameUnachievableReason(input: Parameters<FuzzyJudge['sameUnachievableReason']>[0]): Promise<boolean> {
    const answer = ` ${looseForm(input.answer)} `;
    return UNACHIEVABLE_MARKERS.some((marker) => answer.includes(` ${marker} `));
  }
}

export interface LlmJudgeOptions {
  model: string;
  baseURL?: string;
  apiKey?: string;
  /** An already configured client (tests, shared connection pools). */
  client?: OpenAI;
}

/** The WebArena-style LLM judge over an OpenAI-compatible chat-completions endpoint. */
export class LlmJudge implements FuzzyJudge {
  private readonly client: OpenAI;

  constructor(private readonly options: LlmJudgeOptions) {
    this.client = options.client ?? new OpenAI({ baseURL: options.baseURL, apiKey: options.apiKey ?? 'unused' });
  }

  private async ask(system: string, user: string): Promise<string> {
    const completion = await this.client.chat.completions.create({
      model: this.options.model,
      temperature: 0,
      max_tokens: 256,
      messages: [
        { role: 'system', content: system },
        { role: 'user', content: user },
      ],
    });
    return (completion.choices[0]?.message.content ?? '').toLowerCase();
  }

  async matches(input: { intent: string; reference: string[]; answer: string }): Promise<boolean> {
    const verdict = await this.ask(
      'You grade a student\'s answer to a question against the reference answer. Different wording is ' +
        'fine; what matters is whether the answer means the same as the reference. The string "N/A" ' +
        'stands for "this task cannot be achieved".',
      `question: ${input.intent}\nreference answer: ${input.reference.join(', ')}\nstudent answer: ${input.answer}\n` +
        'End your reply with one verdict: "correct", "incorrect" or "partially correct".',
    );
    if (verdict.includes('partially correct') || verdict.includes('incorrect')) return false;
    return verdict.includes('correct');
  }

  async sameUnachievableReason(input: { intent: string; reason: string; answer: string }): Promise<boolean> {
    const verdict = await this.ask(
      'A task cannot be done for a known reason. Someone tried it, gave up and reported a reason. ' +
        'Decide whether the reported reason agrees with the known reason, even if only implicitly.',
      `task: ${input.intent}\nknown reason: ${input.reason}\nreported reason: ${input.answer}\n` +
        'Reply "same" if they agree, otherwise "different".',
    );
    return verdict.includes('same') && !verdict.includes('different');
  }
}
