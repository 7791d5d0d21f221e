/**
 * Action log-probs of an LLM actor behind an OpenAI-compatible COMPLETIONS endpoint, for the replay
 * perplexity filter and the KL term. The text scored is the released checkpoints' prompt (webrl.md §4,
 * `browser/policies/prompt.ts`) followed by the action; the action's tokens are those overlapping the
 * characters after the prompt, and their log-probs come back as prompt log-probs:
 *
 *   mode 'echo'             {prompt, echo: true, logprobs: 1, max_tokens: 0}; reads
 *                           choices[0].logprobs.{tokens, token_logprobs, text_offset} (OpenAI legacy shape)
 *   mode 'prompt_logprobs'  {prompt, max_tokens: 1, prompt_logprobs: 0} (vLLM); reads
 *                           choices[0].prompt_logprobs[i] = {<token id>: {logprob, decoded_token}}
 *
 * "Number of action tokens" is the count of those tokens; mean token log-prob = sum / count.
 */
import { buildPrompt } from '../../browser/policies/prompt';
import type { ActionLogProb, ActionScorer, ScoredAction } from '../actor';
import type { ModelState } from '../state';
import { mapWithConcurrency } from './concurrency';
import { createClient, describeEndpoint, type EndpointOptions } from './openaiClient';
import { MalformedReplyError, withRetries, type RetryOptions } from './retry';

export interface CompletionsActorOptions extends EndpointOptions, RetryOptions {
  mode?: 'echo' | 'prompt_logprobs';
  /** Requests in flight (default 4). */
  concurrency?: number;
}

interface ScoredToken {
  text: string;
  logprob: number | null;
}

/** The tokens covering the last `length` characters of the scored text: walk back until they are covered. */
function actionTokens(tokens: readonly ScoredToken[], fullText: string, length: number): ScoredToken[] {
  const taken: ScoredToken[] = [];
  let covered = 0;
  for (let i = tokens.length - 1; i >= 0 && covered < length; i--) {
    taken.unshift(tokens[i]!);
    covered += tokens[i]!.text.length;
  }
  const joined = taken.map((token) => token.text).join('');
  if (covered < length || !joined.endsWith(fullText.slice(fullText.length - length))) {
    throw new MalformedReplyError('the returned prompt tokens do not reproduce the action text');
  }
  return taken;
}

function echoTokens(reply: unknown, fullText: string): ScoredToken[] {
  const logprobs = (reply as { choices?: { logprobs?: unknown }[] })?.choices?.[0]?.logprobs as
    | { tokens?: unknown; token_logprobs?: unknown; text_offset?: unknown }
    | undefined;
  const tokens = logprobs?.tokens;
  const values = logprobs?.token_logprobs;
  if (!Array.isArray(tokens) || !Array.isArray(values) || tokens.length !== values.length) {
    throw new MalformedReplyError('the reply has no choices[0].logprobs.tokens / token_logprobs of equal length');
  }
  const offsets = Array.isArray(logprobs?.text_offset) ? (logprobs.text_offset as unknown[]) : undefined;
  const scored: ScoredToken[] = [];
  tokens.forEach((text, i) => {
    // Tokens generated after the echoed text (servers that insist on max_tokens >= 1) are not scored.
    const offset = offsets?.[i];
    if (typeof offset === 'number' && offset >= fullText.length) return;
    const value = values[i];
    if (typeof text !== 'string' || (value !== null && typeof value !== 'number')) throw new MalformedReplyError(`token ${i} is not (string, number | null)`);
    scored.push({ text, logprob: value });
  });
  return scored;
}

function promptLogprobTokens(reply: unknown): ScoredToken[] {
  const entries = (reply as { choices?: { prompt_logprobs?: unknown }[] })?.choices?.[0]?.prompt_logprobs;
  if (!Array.isArray(entries)) throw new MalformedReplyError('the reply has no choices[0].prompt_logprobs');
  return entries.map((entry, i) => {
    if (entry === null) return { text: '', logprob: null };
    const first = typeof entry === 'object' ? Object.values(entry as Record<string, unknown>)[0] : undefined;
    const { logprob, decoded_token } = (first ?? {}) as { logprob?: unknown; decoded_token?: unknown };
    if (typeof logprob !== 'number' || typeof decoded_token !== 'string') throw new MalformedReplyError(`prompt_logprobs[${i}] has no logprob / decoded_token`);
    return { text: decoded_token, logprob };
  });
}

/** The exact prompt text the completions actor sends in `state` (the released checkpoints' format). */
export function statePrompt(state: ModelState): string {
  return buildPrompt(state.intent, state.history.map((round) => round.response), state.observation.html);
}

export function createCompletionsActorScorer(options: CompletionsActorOptions): ActionScorer {
  const client = createClient(options);
  const mode = options.mode ?? 'echo';
  const what = `action log-probs from ${describeEndpoint(options)}`;

  async function score(item: ScoredAction): Promise<ActionLogProb> {
    if (item.response.length === 0) throw new Error('an empty action has no tokens to score');
    const fullText = statePrompt(item.state) + item.response;
    return withRetries(
      what,
      async () => {
        const body =
          mode === 'echo'
            ? { model: options.model, prompt: fullText, echo: true, logprobs: 1, max_tokens: 0, temperature: 0 }
            : { model: options.model, prompt: fullText, max_tokens: 1, temperature: 0, prompt_logprobs: 0 };
        const reply: unknown = await client.completions.create(body, { signal: options.signal });
        const tokens = mode === 'echo' ? echoTokens(reply, fullText) : promptLogprobTokens(reply);
        const action = actionTokens(tokens, fullText, item.response.length);
        if (action.length === 0) throw new MalformedReplyError('no tokens cover the action');
        if (action.some((token) => token.logprob === null)) throw new MalformedReplyError('an action token has no log-prob');
        const logProb = action.reduce((sum, token) => sum + token.logprob!, 0);
        return { logProb, tokens: action.length, meanTokenLogProb: logProb / action.length, inCandidates: true };
      },
      options,
    );
  }

  return {
    logProbs: (items) => mapWithConcurrency(items, options.concurrency ?? 4, (item) => score(item)),
  };
}
