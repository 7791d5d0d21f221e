/**
 * The model backend of each role, chosen from the frozen campaign config's `models` section: the
 * embedded ONNX models (the default) or the remote backends of models/remote. Keys come from the
 * worker's environment (config/secrets.ts), never from the config, so they never reach S3 or histories.
 */
import { createOpenAIPolicy } from '../../browser/policies/openai';
import type { Policy } from '../../browser/policies/policy';
import { contextBudget, createPromptBuilder, type PromptBuilder } from '../../browser/policies/promptBudget';
import { promptFormatOf } from '../../browser/policies/promptFormat';
import type { ModelsConfig } from '../../config/schema';
import { SECRET_ENV, type ModelSecrets } from '../../config/secrets';
import type { ActionLogProb, ActionScorer, ScoredAction } from '../../models/actor';
import type { StateValueFunction } from '../../models/critic';
import type { OrmVerdict, OutcomeJudge } from '../../models/orm';
import type { ModelState } from '../../models/state';
import { createChatOrm } from '../../models/remote/chatOrm';
import type { ChatOptions } from '../../models/remote/chatText';
import { createCompletionsActorScorer } from '../../models/remote/completionsActor';
import { mapSettled } from '../../models/remote/concurrency';
import { isServerUnavailable } from '../../models/remote/retry';
import { createHttpCritic } from '../../models/remote/httpCritic';
import { loadOnnxFileCritic } from '../../models/remote/onnxFileCritic';
import { createVllmTokenCounter } from '../../models/remote/tokenCounter';

type Endpoint = { baseUrl: string; model: string; timeoutMs: number; maxAttempts: number; retryDelayMs: number };

/** One item a remote model could not answer usefully; stored beside the activity's output. */
export interface BackendFailure {
  /** What was asked about (a trajectory key, a task id, a replay row). */
  item: string;
  reason: string;
}

export function chatOptions(endpoint: Endpoint, secrets: ModelSecrets, signal?: AbortSignal): ChatOptions {
  return {
    baseURL: endpoint.baseUrl,
    model: endpoint.model,
    timeoutMs: endpoint.timeoutMs,
    maxAttempts: endpoint.maxAttempts,
    retryDelayMs: endpoint.retryDelayMs,
    ...(secrets.llmApiKey ? { apiKey: secrets.llmApiKey } : {}),
    ...(signal ? { signal } : {}),
  };
}

/** The remote ORM, or undefined for the embedded one. */
export function remoteOrm(models: ModelsConfig, secrets: ModelSecrets, signal?: AbortSignal): OutcomeJudge | undefined {
  const orm = models.orm;
  if (orm.backend !== 'chat') return undefined;
  return createChatOrm({
    ...chatOptions(orm, secrets, signal),
    topLogprobs: orm.topLogprobs,
    actionTargets: orm.actionTargets,
    concurrency: orm.concurrency,
    ...(orm.maxObservationChars !== undefined ? { maxObservationChars: orm.maxObservationChars } : {}),
  });
}

/**
 * Runs `work` item by item: an item whose call fails is null in the results and recorded, never thrown;
 * but a server that is down (isServerUnavailable) fails the whole call, so the activity is retried and
 * no item is lost to an outage.
 */
async function itemByItem<T extends { id: string }, R>(
  items: readonly T[],
  concurrency: number,
  work: (item: T) => Promise<R>,
): Promise<{ results: (R | null)[]; failures: BackendFailure[] }> {
  let unavailable: unknown;
  const settled = await mapSettled(items, concurrency, async (item) => {
    try {
      return await work(item);
    } catch (error) {
      if (isServerUnavailable(error)) unavailable ??= error;
      throw error;
    }
  });
  if (unavailable !== undefined) throw unavailable;
  const failures: BackendFailure[] = [];
  const results = settled.map((result, i) => {
    if (result.ok) return result.value;
    failures.push({ item: items[i]!.id, reason: result.reason });
    return null;
  });
  return { results, failures };
}

/** Judges each state on its own, so one unusable reply costs one verdict (null), recorded as a failure. */
export async function judgeEach(
  judge: OutcomeJudge,
  states: readonly { id: string; state: ModelState }[],
  concurrency: number,
): Promise<{ verdicts: (OrmVerdict | null)[]; failures: BackendFailure[] }> {
  const { results, failures } = await itemByItem(states, concurrency, async ({ state }) => (await judge.judge([state]))[0]!);
  return { verdicts: results, failures };
}

type CompletionsActor = Extract<ModelsConfig['actor'], { backend: 'completions' }>;

/**
 * How the completions actor's prompts are written (its prompt format) and kept within the model's
 * context (counted by the server's tokenizer, under the configured model's name: every adapter of it
 * shares the tokenizer). Rollouts, log-prob scoring, training records and the critic all use it.
 */
export function actorPrompts(actor: CompletionsActor, secrets: ModelSecrets, signal?: AbortSignal): PromptBuilder {
  const format = promptFormatOf(actor);
  if (actor.contextTokens === 'off') return createPromptBuilder(format);
  const counter = createVllmTokenCounter({ ...chatOptions(actor, secrets, signal), baseURL: actor.baseUrl });
  return createPromptBuilder(format, contextBudget(counter, actor.maxTokens, actor.contextTokens === 'server' ? undefined : actor.contextTokens));
}

/** The completions actor's prompts, or undefined for the embedded actor. */
export function remotePrompts(models: ModelsConfig, secrets: ModelSecrets, signal?: AbortSignal): PromptBuilder | undefined {
  return models.actor.backend === 'completions' ? actorPrompts(models.actor, secrets, signal) : undefined;
}

/**
 * The remote actor's scorer, or undefined for the embedded actor. `served` is the name the actor
 * checkpoint was deployed under (activities/campaign/deployActivities.ts); without one, the configured model.
 */
export function remoteActorScorer(models: ModelsConfig, secrets: ModelSecrets, signal?: AbortSignal, served?: string): ActionScorer | undefined {
  const actor = models.actor;
  if (actor.backend !== 'completions') return undefined;
  return createCompletionsActorScorer({
    ...chatOptions({ ...actor, model: served ?? actor.model }, secrets, signal),
    mode: actor.mode,
    concurrency: actor.concurrency,
    prompts: actorPrompts(actor, secrets, signal),
  });
}

/** Log-probs item by item; an item the server cannot score is null and recorded. */
export async function logProbsEach(
  scorer: ActionScorer,
  items: readonly (ScoredAction & { id: string })[],
  concurrency: number,
): Promise<{ logProbs: (ActionLogProb | null)[]; failures: BackendFailure[] }> {
  const { results, failures } = await itemByItem(items, concurrency, async ({ state, response }) => (await scorer.logProbs([{ state, response }]))[0]!);
  return { logProbs: results, failures };
}

/**
 * The remote actor as a rollout policy (completions over the released checkpoints' prompt), asking for
 * `served` (the deployed name of the checkpoint) or else the configured model. The OpenAI policy reads
 * its key from a variable, so it is told which one holds it.
 */
export function remoteActorPolicy(models: ModelsConfig, secrets: ModelSecrets, temperature: number, served?: string, env: NodeJS.ProcessEnv = process.env): Policy | undefined {
  const actor = models.actor;
  if (actor.backend !== 'completions') return undefined;
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
    prompts: actorPrompts(actor, secrets),
  });
}

const fileCritics = new Map<string, Promise<StateValueFunction>>();

/** The critic to use instead of the campaign's embedded checkpoint, or undefined for that checkpoint. */
export async function remoteCritic(models: ModelsConfig, secrets: ModelSecrets, signal?: AbortSignal): Promise<StateValueFunction | undefined> {
  const critic = models.critic;
  if (critic.backend === 'onnx-file') {
    // One ONNX session per file and worker, as the model cache does for embedded checkpoints.
    let loaded = fileCritics.get(critic.path);
    if (!loaded) {
      loaded = loadOnnxFileCritic(critic.path, critic.threads);
      fileCritics.set(critic.path, loaded);
      loaded.catch(() => fileCritics.delete(critic.path));
    }
    return loaded;
  }
  if (critic.backend !== 'http') return undefined;
  return createHttpCritic({
    baseURL: critic.baseUrl,
    timeoutMs: critic.timeoutMs,
    maxAttempts: critic.maxAttempts,
    retryDelayMs: critic.retryDelayMs,
    batchSize: critic.batchSize,
    ...(models.actor.backend === 'completions' ? { prompts: actorPrompts(models.actor, secrets, signal) } : {}),
    ...(secrets.criticApiKey ? { apiKey: secrets.criticApiKey } : {}),
    ...(signal ? { signal } : {}),
  });
}
