/**
 * The completions actor: rollouts from an OpenAI-compatible completions endpoint prompted in its prompt
 * format (docs/prompt-formats.md) within the model's context, replay log-probs from the same server,
 * and training records for an external trainer. The checkpoint names the trainer's output; the server
 * answers to the name it was deployed under (activities/campaign/deployActivities.ts).
 */
import { createOpenAIPolicy } from '../../../browser/policies/openai';
import type { Policy } from '../../../browser/policies/policy';
import { contextBudget, createPromptBuilder, type PromptBuilder } from '../../../browser/policies/promptBudget';
import { promptFormatOf } from '../../../browser/policies/promptFormat';
import { SECRET_ENV, type ModelSecrets } from '../../../config/secrets';
import type { ActionScorer } from '../../actor';
import { createCompletionsActorScorer } from '../../remote/completionsActor';
import { createVllmTokenCounter } from '../../remote/tokenCounter';
import type { ModelBackend } from '../contract';
import { chatOptions, itemByItem } from '../remoteCalls';
import { servedActor } from '../serving';
import { completionsActorCheck } from './check';
import { settings, type CompletionsActorSettings } from './settings';

/**
 * How the actor's prompts are written (its prompt format) and kept within the model's context (counted
 * by the server's tokenizer under the configured model's name: every adapter of it shares the
 * tokenizer). Rollouts, log-prob scoring, training records and the critic use it.
 */
export function actorPrompts(actor: CompletionsActorSettings, secrets: ModelSecrets): PromptBuilder {
  const format = promptFormatOf(actor);
  if (actor.contextTokens === 'off') return createPromptBuilder(format);
  const counter = createVllmTokenCounter({ ...chatOptions(actor, secrets), baseURL: actor.baseUrl });
  return createPromptBuilder(format, contextBudget(counter, actor.maxTokens, actor.contextTokens === 'server' ? undefined : actor.contextTokens));
}

/** The actor's scorer, asking for `served` (the name the checkpoint was deployed under) or else the configured model. */
export function completionsActorScorer(
  actor: CompletionsActorSettings,
  secrets: ModelSecrets,
  signal?: AbortSignal,
  served?: string,
  prompts?: PromptBuilder,
): ActionScorer {
  return createCompletionsActorScorer({
    ...chatOptions({ ...actor, model: served ?? actor.model }, secrets, signal),
    mode: actor.mode,
    concurrency: actor.concurrency,
    prompts: prompts ?? actorPrompts(actor, secrets),
  });
}

/**
 * The actor as a rollout policy, asking for `served` or else the configured model. The OpenAI policy
 * reads its key from a variable, so it is told which one holds it.
 */
export function completionsActorPolicy(
  actor: CompletionsActorSettings,
  temperature: number,
  served?: string,
  env: NodeJS.ProcessEnv = process.env,
  prompts = actorPrompts(actor, {}),
): Policy {
  const apiKeyEnv = env[SECRET_ENV.llmApiKey] ? SECRET_ENV.llmApiKey : SECRET_ENV.llmApiKeyFallback;
  return createOpenAIPolicy({
    baseURL: actor.baseUrl,
    model: served ?? actor.model,
    temperature,
    topP: actor.topP,
    topK: actor.topK,
    maxTokens: actor.maxTokens,
    timeoutMs: actor.timeoutMs,
    maxAttempts: actor.maxAttempts,
    retryDelayMs: actor.retryDelayMs,
    apiKeyEnv,
    prompts,
  });
}

export const backend: ModelBackend<typeof settings> = {
  name: 'completions',
  settings,
  defaults: { observationProfile: 'webrl' },
  roles: {
    actor: (actor, { storage, secrets, env, signal, heartbeats }, { serving }) => {
      const prompts = actorPrompts(actor, secrets);
      return {
        prompts,
        phaseZero: actor,
        // A configured context is the trainer's max length too.
        recordFormat: { promptFormat: actor.promptFormat, ...(typeof actor.contextTokens === 'number' ? { maxLength: actor.contextTokens } : {}) },
        async policies(checkpoint, { temperature }) {
          const policy = completionsActorPolicy(actor, temperature, await servedActor(storage, serving, checkpoint), env, prompts);
          return () => policy;
        },
        async logProbs(checkpoint, items) {
          const scorer = completionsActorScorer(actor, secrets, signal(), await servedActor(storage, serving, checkpoint), prompts);
          const scored = itemByItem(items, actor.concurrency, async ({ state, response }) => (await scorer.logProbs([{ state, response }]))[0]!);
          const { results, failures } = await heartbeats.withHeartbeats(() => ({ scoring: items.length }), scored);
          return { logProbs: results, failures };
        },
      };
    },
  },
  checks: { actor: completionsActorCheck },
};
