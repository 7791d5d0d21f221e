/**
 * A critic behind an HTTP endpoint, with this tiny JSON protocol ("webrl.critic/1"):
 *
 *   POST {baseURL}/values      Content-Type: application/json   [Authorization: Bearer <key>]
 *   { "protocol": "webrl.critic/1", ["critic": "<checkpoint name>",]
 *     "states": [ { "intent": "...", "history": ["<raw action output>", ...],
 *                   "observation": { "url": "...", "title": "...", "html": "<simplified html>" },
 *                   "prompt": "<the actor's prompt for this state>" } ] }
 *
 * `prompt` is sent with a completions actor: the text its rollouts sent in that state (its prompt format,
 * cut to the model's context), which a served critic scores as is rather than rendering it again.
 *   200 -> { "values": [ [v1, v2] | [v], ... ], ["critic": "<checkpoint name>"] }     one entry per state, each value in [0, 1]
 *
 * `critic` names the checkpoint to value with, for a server that holds the campaign's critics
 * (`webrl-torch serve-critic --checkpoints DIR`: its path under DIR); the reply names the critic that
 * valued, and a reply from another critic breaks the protocol.
 *
 * States go in batches of `batchSize`. 408/409/429/5xx, timeouts, connection failures and replies that
 * break the protocol are retried (bounded); other statuses fail at once. The key comes from the
 * environment variable `apiKeyEnv` and is sent only as the Authorization header.
 */
import { z } from 'zod';
import type { Secret } from '../../config/secrets';
import { criticValues, type CriticValues, type StateValueFunction } from '../critic';
import type { PromptBuilder } from '../../browser/policies/promptBudget';
import type { ModelState } from '../state';
import { HttpStatusError, MalformedReplyError, withRetries, type RetryOptions } from './retry';

export const CRITIC_PROTOCOL = 'webrl.critic/1';

export interface HttpCriticOptions extends RetryOptions {
  /** e.g. http://127.0.0.1:8100 (the request goes to `${baseURL}/values`). */
  baseURL: string;
  apiKeyEnv?: string;
  /** The key itself (from config/secrets.ts); wins over `apiKeyEnv`. */
  apiKey?: Secret;
  timeoutMs?: number;
  batchSize?: number;
  /** The completions actor's prompts: each state goes with its prompt text. */
  prompts?: PromptBuilder;
  /** The checkpoint to value with, by its name on the server. */
  critic?: string;
}

const probability = z.number().min(0).max(1);
const replySchema = z.object({
  values: z.array(z.union([z.tuple([probability, probability]), z.tuple([probability])])),
  critic: z.string().nullish(),
});

export async function criticRequest(states: readonly ModelState[], prompts?: PromptBuilder, critic?: string) {
  return {
    protocol: CRITIC_PROTOCOL,
    ...(critic !== undefined ? { critic } : {}),
    states: await Promise.all(
      states.map(async (state) => {
        const history = state.history.map((round) => round.response);
        return {
          intent: state.intent,
          history,
          observation: { url: state.observation.url, title: state.observation.title, html: state.observation.html },
          ...(prompts ? { prompt: (await prompts.build(state.intent, history, state.observation.html)).prompt } : {}),
        };
      }),
    ),
  };
}

export function createHttpCritic(options: HttpCriticOptions): StateValueFunction {
  const url = `${options.baseURL.replace(/\/+$/, '')}/values`;
  const key = options.apiKey?.reveal() || (options.apiKeyEnv ? process.env[options.apiKeyEnv] : undefined);
  const headers: Record<string, string> = { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) };

  async function post(states: readonly ModelState[]): Promise<CriticValues[]> {
    const request = JSON.stringify(await criticRequest(states, options.prompts, options.critic));
    return withRetries(
      `critic values from ${url}`,
      async () => {
        const timeout = AbortSignal.timeout(options.timeoutMs ?? 60_000);
        const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
        const response = await fetch(url, { method: 'POST', headers, body: request, signal });
        const text = await response.text();
        if (!response.ok) throw new HttpStatusError(response.status, `HTTP ${response.status}: ${text.slice(0, 200)}`);
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          throw new MalformedReplyError(`the reply is not JSON: ${JSON.stringify(text.slice(0, 80))}`);
        }
        const parsed = replySchema.safeParse(json);
        if (!parsed.success) {
          const issue = parsed.error.issues[0];
          throw new MalformedReplyError(`the reply breaks ${CRITIC_PROTOCOL}: ${issue?.path.join('.') || '(reply)'}: ${issue?.message ?? 'invalid'}`);
        }
        if (options.critic !== undefined && parsed.data.critic !== options.critic) {
          throw new MalformedReplyError(`the reply is from the critic ${JSON.stringify(parsed.data.critic)}, not ${JSON.stringify(options.critic)}`);
        }
        if (parsed.data.values.length !== states.length) {
          throw new MalformedReplyError(`the reply has ${parsed.data.values.length} values for ${states.length} states`);
        }
        return parsed.data.values.map((entry) => criticValues(entry[0], entry[1] ?? entry[0]));
      },
      options,
    );
  }

  return {
    async values(states) {
      const batchSize = options.batchSize ?? 32;
      const out: CriticValues[] = [];
      for (let i = 0; i < states.length; i += batchSize) out.push(...(await post(states.slice(i, i + batchSize))));
      return out;
    },
  };
}
