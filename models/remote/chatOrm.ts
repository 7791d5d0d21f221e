/**
 * An LLM outcome reward model behind an OpenAI-compatible CHAT endpoint (webrl.md §4 ORM input): a
 * system line asking whether the web agent succeeded (answer YES or NO) and the user turn
 *
 *   The User Intent:\n{intent}\n\nAction History:\n{one line per action}\n\nThe Current Screenshot:\n{final observation}
 *
 * Each action line is the raw output, its lines joined with '; ' as WebRL does. With `actionTargets`, an element action's line also says what
 * the element was on its page (`[button "Upvote" 1 of 20 on /f/books/new]`, actionTarget.ts), since ids
 * alone name nothing once the page has changed; it is off by default because WebRL's ORM was trained on
 * the raw lines.
 *
 * It asks for one token with top log-probs and reads P(YES) = p(YES) / (p(YES) + p(NO)), summing the
 * variants of each answer among the top tokens (" YES", "Yes", ...). A reply with neither answer among
 * its top tokens is malformed (retried, then a RemoteModelError).
 */
import { fillTemplate, PROMPT_TEMPLATES } from '../../browser/policies/promptTemplates';
import { targetText } from '../actionTarget';
import type { OrmVerdict, OutcomeJudge } from '../orm';
import { verdict } from '../orm';
import type { ModelState } from '../state';
import { mapWithConcurrency } from './concurrency';
import { createClient, describeEndpoint, type EndpointOptions } from '../../browser/policies/openaiClient';
import { MalformedReplyError, requestSignal, withRetries, type RetryOptions } from './retry';

export interface ChatOrmOptions extends EndpointOptions, RetryOptions {
  /** Top tokens requested (default 20). */
  topLogprobs?: number;
  /** The final observation is cut to this many characters (default 16384 - 512, as the actor prompt). */
  maxObservationChars?: number;
  /** Adds each action's target to its line (default false: WebRL's format). */
  actionTargets?: boolean;
  concurrency?: number;
}

/**
 * WebRL's ORM system text, character for character (scripts/process_data.py, build_rm_data): the
 * released ORM was trained on it, typographic apostrophes included (browser/policies/promptTemplates.ts).
 */
export const ORM_SYSTEM_PROMPT = PROMPT_TEMPLATES.orm.system;

/** One action line as WebRL writes it: the raw output's lines joined with '; ', trimmed. */
export function ormActionLine(response: string): string {
  return response.split('\n').join('; ').trim();
}

/**
 * The user turn as WebRL builds it: intent and final page trimmed, every action line followed by a
 * newline, then a blank line before the page.
 */
export function ormUserTurn(state: ModelState, options: { maxObservationChars?: number; actionTargets?: boolean } = {}): string {
  const { maxObservationChars = PROMPT_TEMPLATES.charBudget, actionTargets = false } = options;
  const actions = state.history
    .map((round) => {
      const line = ormActionLine(round.response);
      return fillTemplate(PROMPT_TEMPLATES.orm.actionLine, { action: actionTargets && round.target ? `${line} ${targetText(round.target)}` : line });
    })
    .join('');
  const page = state.observation.html.slice(0, maxObservationChars).trim();
  return fillTemplate(PROMPT_TEMPLATES.orm.user, { intent: state.intent.trim(), actions, page });
}

function logSumExp(values: number[]): number {
  if (values.length === 0) return -Infinity;
  const max = Math.max(...values);
  return max + Math.log(values.reduce((sum, v) => sum + Math.exp(v - max), 0));
}

export function pYesFromTopLogprobs(reply: unknown): number {
  const first = (reply as { choices?: { logprobs?: { content?: unknown } }[] })?.choices?.[0]?.logprobs?.content;
  const top = Array.isArray(first) ? (first[0] as { top_logprobs?: unknown } | undefined)?.top_logprobs : undefined;
  if (!Array.isArray(top)) throw new MalformedReplyError('the reply has no choices[0].logprobs.content[0].top_logprobs');
  const yes: number[] = [];
  const no: number[] = [];
  for (const entry of top as { token?: unknown; logprob?: unknown }[]) {
    if (typeof entry?.token !== 'string' || typeof entry.logprob !== 'number') continue;
    // A tokenizer may split the answer (SmolLM2's YES is Y + ES): the first token counts for the answer it begins.
    const word = entry.token.trim().toUpperCase();
    if (word !== '' && 'YES'.startsWith(word)) yes.push(entry.logprob);
    else if (word !== '' && 'NO'.startsWith(word)) no.push(entry.logprob);
  }
  if (yes.length === 0 && no.length === 0) throw new MalformedReplyError('neither YES nor NO is among the top tokens');
  const y = logSumExp(yes);
  const n = logSumExp(no);
  const max = Math.max(y, n);
  return Math.exp(y - max) / (Math.exp(y - max) + Math.exp(n - max));
}

export function createChatOrm(options: ChatOrmOptions): OutcomeJudge {
  const client = createClient(options);
  const what = `ORM verdict from ${describeEndpoint(options)}`;
  async function judgeOne(state: ModelState): Promise<OrmVerdict> {
    return withRetries(
      what,
      async () => {
        const reply: unknown = await client.chat.completions.create(
          {
            model: options.model,
            messages: [
              { role: 'system', content: ORM_SYSTEM_PROMPT },
              { role: 'user', content: ormUserTurn(state, options) },
            ],
            max_completion_tokens: 1,
            temperature: 0,
            logprobs: true,
            top_logprobs: options.topLogprobs ?? 20,
          },
          { signal: requestSignal(options.signal) },
        );
        return verdict(pYesFromTopLogprobs(reply));
      },
      options,
    );
  }
  return { judge: (states) => mapWithConcurrency(states, options.concurrency ?? 4, judgeOne) };
}
