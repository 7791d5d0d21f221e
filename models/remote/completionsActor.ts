/**
 * Action log-probs of an LLM actor behind an OpenAI-compatible COMPLETIONS endpoint, for the replay
 * perplexity filter and the KL term. The text scored is the actor's prompt as rollouts sent it
 * (browser/policies/promptBudget.ts) followed by the action and the format's end of turn (`<|eot_id|>`,
 * `<|im_end|>`: the model's stop is part of what it did); the action's tokens are those overlapping the
 * characters after the prompt, and their log-probs come back as prompt log-probs:
 *
 *   mode 'echo'             {prompt, echo: true, logprobs: 1, max_tokens: 0}; reads
 *                           choices[0].logprobs.{tokens, token_logprobs} (OpenAI legacy shape) and
 *                           usage.prompt_tokens
 *   mode 'prompt_logprobs'  {prompt, max_tokens: 1, prompt_logprobs: 0, return_token_ids: true} (vLLM);
 *                           reads choices[0].prompt_logprobs[i] = {<token id>: {logprob, decoded_token}}
 *                           and choices[0].prompt_token_ids
 *
 * "Number of action tokens" is the count of those tokens, the end of turn's included; mean token
 * log-prob = sum / count.
 */
import { createPromptBuilder, type PromptBuilder } from '../../browser/policies/promptBudget';
import { webrlLlama3Format } from '../../browser/policies/promptFormat';
import type { ActionLogProb, ActionScorer, ScoredAction } from '../actor';
import type { ModelState } from '../state';
import { mapWithConcurrency } from './concurrency';
import { createClient, describeEndpoint, type EndpointOptions } from '../../browser/policies/openaiClient';
import { MalformedReplyError, requestSignal, withRetries, type RetryOptions } from './retry';

export interface CompletionsActorOptions extends EndpointOptions, RetryOptions {
  mode?: 'echo' | 'prompt_logprobs';
  /** Requests in flight (default 4). */
  concurrency?: number;
  /** The actor's prompts, as its rollouts write them (default: webrl-llama3 with its character budget only). */
  prompts?: PromptBuilder;
}

interface ScoredToken {
  text: string;
  logprob: number | null;
}

/**
 * A token's length in UTF-8 bytes, as the server decoded it alone. A token holding part of a multi-byte
 * character (byte-level BPE, byte fallback) decodes to U+FFFD, counted as the one byte it usually is.
 */
function tokenBytes(text: string): number {
  let bytes = 0;
  for (const char of text) bytes += char === '\uFFFD' ? 1 : Buffer.byteLength(char);
  return bytes;
}

/** What survives a token-by-token decode of any text: its printable ASCII and white space. */
const ascii = (text: string) => text.replace(/[^ -~\t\n\r]/g, '');

/**
 * The tokens covering the action, the last `action` bytes of the scored text: walk back from the last
 * prompt token until they are covered. Tokens are compared with the text by their ASCII, since a token
 * decoded alone may show part of a character as U+FFFD; a BOS before the text is never reached.
 */
function actionTokens(tokens: readonly ScoredToken[], action: string): ScoredToken[] {
  const length = Buffer.byteLength(action);
  const taken: ScoredToken[] = [];
  let covered = 0;
  for (let i = tokens.length - 1; i >= 0 && covered < length; i--) {
    taken.unshift(tokens[i]!);
    covered += tokenBytes(tokens[i]!.text);
  }
  if (covered < length || !ascii(taken.map((token) => token.text).join('')).endsWith(ascii(action))) {
    throw new MalformedReplyError('the returned prompt tokens do not reproduce the action text');
  }
  return taken;
}

/**
 * The echoed tokens of the scored text, in order. A server may put a token before the text that it did
 * not come from (a BOS the tokenizer adds: vLLM echoes Llama-3's `<|begin_of_text|>`, and its
 * `text_offset`s count it), which the walk back from the end never reaches, and tokens after it
 * (servers that insist on max_tokens >= 1 generate one): `usage.prompt_tokens` says how many were echoed.
 */
function echoTokens(reply: unknown): ScoredToken[] {
  const { choices, usage } = (reply ?? {}) as { choices?: { logprobs?: unknown }[]; usage?: { prompt_tokens?: unknown } };
  const logprobs = choices?.[0]?.logprobs as { tokens?: unknown; token_logprobs?: unknown } | undefined;
  const tokens = logprobs?.tokens;
  const values = logprobs?.token_logprobs;
  if (!Array.isArray(tokens) || !Array.isArray(values) || tokens.length !== values.length) {
    throw new MalformedReplyError('the reply has no choices[0].logprobs.tokens / token_logprobs of equal length');
  }
  const echoed = typeof usage?.prompt_tokens === 'number' && usage.prompt_tokens <= tokens.length ? usage.prompt_tokens : tokens.length;
  return tokens.slice(0, echoed).map((text, i) => {
    const value = values[i];
    if (typeof text !== 'string' || (value !== null && typeof value !== 'number')) throw new MalformedReplyError(`token ${i} is not (string, number | null)`);
    return { text, logprob: value };
  });
}

/**
 * vLLM's prompt log-probs: entry i maps token ids to {logprob, decoded_token}; it holds the prompt's own
 * token and, with prompt_logprobs > 0, the top alternatives too. A JSON object's integer keys lose their
 * order in JavaScript, so the prompt's token is picked by its id (`prompt_token_ids`, asked for with
 * `return_token_ids`); an entry of one token needs no id.
 */
function promptLogprobTokens(reply: unknown): ScoredToken[] {
  const choice = (reply as { choices?: { prompt_logprobs?: unknown; prompt_token_ids?: unknown }[] })?.choices?.[0];
  const entries = choice?.prompt_logprobs;
  if (!Array.isArray(entries)) throw new MalformedReplyError('the reply has no choices[0].prompt_logprobs');
  const ids = Array.isArray(choice?.prompt_token_ids) ? (choice.prompt_token_ids as unknown[]) : undefined;
  return entries.map((entry, i) => {
    if (entry === null) return { text: '', logprob: null };
    const options = typeof entry === 'object' ? (entry as Record<string, unknown>) : {};
    const keys = Object.keys(options);
    const id = ids?.[i];
    const own = id !== undefined ? options[String(id)] : keys.length === 1 ? options[keys[0]!] : undefined;
    if (own === undefined) throw new MalformedReplyError(`prompt_logprobs[${i}] does not say which token is the prompt's (no prompt_token_ids)`);
    const { logprob, decoded_token } = own as { logprob?: unknown; decoded_token?: unknown };
    if (typeof logprob !== 'number' || typeof decoded_token !== 'string') throw new MalformedReplyError(`prompt_logprobs[${i}] has no logprob / decoded_token`);
    return { text: decoded_token, logprob };
  });
}

/** The exact prompt text the completions actor sends in `state`. */
export async function statePrompt(prompts: PromptBuilder, state: ModelState): Promise<string> {
  return (
    await prompts.build(
      state.intent,
      state.history.map((round) => round.response),
      state.observation.html,
    )
  ).prompt;
}

export function createCompletionsActorScorer(options: CompletionsActorOptions): ActionScorer {
  const client = createClient(options);
  const mode = options.mode ?? 'echo';
  const prompts = options.prompts ?? createPromptBuilder(webrlLlama3Format);
  const what = `action log-probs from ${describeEndpoint(options)}`;

  async function score(item: ScoredAction): Promise<ActionLogProb> {
    if (item.response.length === 0) throw new Error('an empty action has no tokens to score');
    const action = item.response + prompts.format.endOfTurn;
    const fullText = (await statePrompt(prompts, item.state)) + action;
    return withRetries(
      what,
      async () => {
        const body =
          mode === 'echo'
            ? { model: options.model, prompt: fullText, echo: true, logprobs: 1, max_tokens: 0, temperature: 0 }
            : { model: options.model, prompt: fullText, max_tokens: 1, temperature: 0, prompt_logprobs: 0, return_token_ids: true };
        const reply: unknown = await client.completions.create(body, { signal: requestSignal(options.signal) });
        const tokens = mode === 'echo' ? echoTokens(reply) : promptLogprobTokens(reply);
        const scored = actionTokens(tokens, action);
        if (scored.length === 0) throw new MalformedReplyError('no tokens cover the action');
        if (scored.some((token) => token.logprob === null)) throw new MalformedReplyError('an action token has no log-prob');
        const logProb = scored.reduce((sum, token) => sum + token.logprob!, 0);
        return { logProb, tokens: scored.length, meanTokenLogProb: logProb / scored.length, inCandidates: true };
      },
      options,
    );
  }

  return {
    logProbs: (items) => mapWithConcurrency(items, options.concurrency ?? 4, (item) => score(item)),
  };
}
