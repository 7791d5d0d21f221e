/**
 * The one place a model role's backend is chosen: from a campaign config's `models` section, the
 * embedded ONNX models (the default) or the remote backends of models/remote, resolved once per worker
 * and config and handed to the activity factories as interfaces (activities/campaign/roles.ts). Keys
 * come from the worker's secrets (config/secrets.ts), never from the config, so they never reach S3 or
 * histories.
 */
import { Context } from '@temporalio/activity';
import { join } from 'node:path';
import { createOpenAIPolicy } from '../../browser/policies/openai';
import type { Policy } from '../../browser/policies/policy';
import { contextBudget, createPromptBuilder, type PromptBuilder } from '../../browser/policies/promptBudget';
import { promptFormatOf } from '../../browser/policies/promptFormat';
import type { CompletionsActorConfig, ModelsConfig } from '../../config/schema';
import { SECRET_ENV, type ModelSecrets } from '../../config/secrets';
import type { ActionLogProb, ActionScorer, ScoredAction } from '../../models/actor';
import { createActorPolicy } from '../../models/actorPolicy';
import type { StateValueFunction } from '../../models/critic';
import type { OrmVerdict, OutcomeJudge } from '../../models/orm';
import type { ModelState } from '../../models/state';
import { createChatOrm } from '../../models/remote/chatOrm';
import type { ChatOptions } from '../../models/remote/chatText';
import { createCompletionsActorScorer } from '../../models/remote/completionsActor';
import { mapSettled } from '../../models/remote/concurrency';
import { judgeFeasibility } from '../../models/remote/feasibility';
import { isServerUnavailable } from '../../models/remote/retry';
import { createHttpCritic } from '../../models/remote/httpCritic';
import { loadOnnxFileCritic } from '../../models/remote/onnxFileCritic';
import { createVllmTokenCounter } from '../../models/remote/tokenCounter';
import { syncCheckpoint } from '../../storage/checkpoints';
import { createChatTaskGenerator } from './chatTaskGenerator';
import type { CampaignContext } from './context';
import { withHeartbeats } from '../heartbeats';
import { commandServing, servedActor, vllmLoraServing } from './deployActivities';
import type { ModelCache } from './models';
import type {
  ActorRole,
  ActorServing,
  BackendFailure,
  CriticRole,
  FeasibilityJudge,
  ModelRoles,
  OrmRole,
  RolesFor,
  StateItem,
  TaskGenerator,
  Trainer,
} from './roles';
import { embeddedTrainer, externalTrainer, type ExternalActorJob } from './trainers';

type Endpoint = { baseUrl: string; model: string; timeoutMs: number; maxAttempts: number; retryDelayMs: number };

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

/** The running activity's cancellation: a remote call stops when its activity is cancelled. */
function activitySignal(): AbortSignal {
  return Context.current().cancellationSignal;
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
async function judgeEach(
  judge: OutcomeJudge,
  states: readonly { id: string; state: ModelState }[],
  concurrency: number,
): Promise<{ verdicts: (OrmVerdict | null)[]; failures: BackendFailure[] }> {
  const { results, failures } = await itemByItem(states, concurrency, async ({ state }) => (await judge.judge([state]))[0]!);
  return { verdicts: results, failures };
}

/** Log-probs item by item; an item the server cannot score is null and recorded. */
async function logProbsEach(
  scorer: ActionScorer,
  items: readonly (ScoredAction & { id: string })[],
  concurrency: number,
): Promise<{ logProbs: (ActionLogProb | null)[]; failures: BackendFailure[] }> {
  const { results, failures } = await itemByItem(items, concurrency, async ({ state, response }) => (await scorer.logProbs([{ state, response }]))[0]!);
  return { logProbs: results, failures };
}

/**
 * How the completions actor's prompts are written (its prompt format, docs/prompt-formats.md) and kept
 * within the model's context (counted by the server's tokenizer under the configured model's name: every
 * adapter of it shares the tokenizer). Rollouts, log-prob scoring, training records and the critic use it.
 */
export function actorPrompts(actor: CompletionsActorConfig, secrets: ModelSecrets): PromptBuilder {
  const format = promptFormatOf(actor);
  if (actor.contextTokens === 'off') return createPromptBuilder(format);
  const counter = createVllmTokenCounter({ ...chatOptions(actor, secrets), baseURL: actor.baseUrl });
  return createPromptBuilder(format, contextBudget(counter, actor.maxTokens, actor.contextTokens === 'server' ? undefined : actor.contextTokens));
}

/**
 * The completions actor's scorer, asking for `served` (the name the checkpoint was deployed under,
 * activities/campaign/deployActivities.ts) or else the configured model.
 */
export function completionsActorScorer(
  actor: CompletionsActorConfig,
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
 * The completions actor as a rollout policy (completions over the released checkpoints' prompt), asking
 * for `served` or else the configured model. The OpenAI policy reads its key from a variable, so it is
 * told which one holds it.
 */
export function completionsActorPolicy(
  actor: CompletionsActorConfig,
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

/**
 * A critic asked in batches: a batch that fails costs that batch (null, recorded), not the phase; a
 * server that is down fails the call (the activity is retried, no candidate lost to an outage).
 * `critic(checkpoint)` is the value function of the campaign's checkpoint, or of the one critic a
 * backend outside the campaign's checkpoints has.
 */
function batchedCritic(critic: (checkpoint: string) => Promise<StateValueFunction>, size: number, trainedByCampaign = false): CriticRole {
  return {
    valuesTasks: true,
    trainedByCampaign,
    async values(checkpoint, items) {
      const valueFunction = await critic(checkpoint);
      const batches = Array.from({ length: Math.ceil(items.length / size) }, (_, b) => items.slice(b * size, (b + 1) * size));
      let unavailable: unknown;
      const settled = await withHeartbeats(
        () => ({ valuing: items.length }),
        mapSettled(batches, 1, (batch) =>
          valueFunction.values(batch.map((item) => item.state)).catch((error: unknown) => {
            if (isServerUnavailable(error)) unavailable ??= error;
            throw error;
          }),
        ),
      );
      if (unavailable !== undefined) throw unavailable;
      const values: Awaited<ReturnType<CriticRole['values']>>['values'] = [];
      const failures: BackendFailure[] = [];
      settled.forEach((result, b) => {
        if (result.ok) values.push(...result.value);
        else {
          values.push(...batches[b]!.map(() => null));
          failures.push(...batches[b]!.map((item) => ({ item: item.id, reason: result.reason })));
        }
      });
      return { values, failures };
    },
  };
}

const states = (items: readonly StateItem[]) => items.map((item) => item.state);

/**
 * Resolves the roles of each campaign config that reaches this worker, once per distinct `models`
 * section: one worker serves every campaign on its queues, each under its own frozen config.
 */
export function createRoleResolver(deps: { ctx: CampaignContext; models: ModelCache; secrets: ModelSecrets; env?: NodeJS.ProcessEnv }): RolesFor {
  const { ctx, models, secrets, env = process.env } = deps;
  const resolved = new Map<string, ModelRoles>();
  // One ONNX session per critic file and worker, as the model cache keeps one per embedded checkpoint.
  const fileCritics = new Map<string, Promise<StateValueFunction>>();

  function actorOf(actor: ModelsConfig['actor'], serving: ActorServing | undefined): ActorRole {
    switch (actor.backend) {
      case 'embedded':
        return {
          async policies(checkpoint, { temperature, seed }) {
            const onnx = await models.actor(checkpoint);
            return () => (temperature > 0 ? createActorPolicy(onnx, { mode: 'sample', temperature, seed }) : createActorPolicy(onnx, { mode: 'greedy' }));
          },
          async logProbs(checkpoint, items) {
            const onnx = await models.actor(checkpoint);
            return { logProbs: await onnx.logProbs(items.map(({ state, response }) => ({ state, response }))), failures: [] };
          },
        };
      case 'completions': {
        // The checkpoint names the trainer's output; the server answers to the name it was deployed under.
        const prompts = actorPrompts(actor, secrets);
        return {
          prompts,
          phaseZero: actor,
          async policies(checkpoint, { temperature }) {
            const policy = completionsActorPolicy(actor, temperature, await servedActor(ctx, serving, checkpoint), env, prompts);
            return () => policy;
          },
          async logProbs(checkpoint, items) {
            const scorer = completionsActorScorer(actor, secrets, activitySignal(), await servedActor(ctx, serving, checkpoint), prompts);
            return withHeartbeats(() => ({ scoring: items.length }), logProbsEach(scorer, items, actor.concurrency));
          },
        };
      }
    }
  }

  /** `prompts`: a completions actor's, sent with each state to an HTTP critic. */
  function criticOf(critic: ModelsConfig['critic'], prompts: PromptBuilder | undefined): CriticRole {
    switch (critic.backend) {
      case 'embedded':
        return {
          valuesTasks: true,
          trainedByCampaign: true,
          async values(checkpoint, items) {
            return { values: await (await models.critic(checkpoint)).values(states(items)), failures: [] };
          },
        };
      case 'onnx-file':
        return batchedCritic(() => {
          let loaded = fileCritics.get(critic.path);
          if (!loaded) {
            loaded = loadOnnxFileCritic(critic.path, critic.threads);
            fileCritics.set(critic.path, loaded);
            loaded.catch(() => fileCritics.delete(critic.path));
          }
          return loaded;
        }, 256);
      case 'http':
        return batchedCritic(
          async () =>
            createHttpCritic({
              baseURL: critic.baseUrl,
              timeoutMs: critic.timeoutMs,
              maxAttempts: critic.maxAttempts,
              retryDelayMs: critic.retryDelayMs,
              batchSize: critic.batchSize,
              ...(prompts ? { prompts } : {}),
              ...(secrets.criticApiKey ? { apiKey: secrets.criticApiKey } : {}),
              signal: activitySignal(),
            }),
          critic.batchSize,
        );
      case 'served':
        // Each phase's critic is synced under the server's --checkpoints directory by its storage key,
        // and every request names it there: the server values with the checkpoint the phase asks for.
        return batchedCritic(
          async (checkpoint) => {
            await syncCheckpoint(ctx.store, checkpoint, join(critic.sharedDir, checkpoint));
            return createHttpCritic({
              baseURL: critic.baseUrl,
              timeoutMs: critic.timeoutMs,
              maxAttempts: critic.maxAttempts,
              retryDelayMs: critic.retryDelayMs,
              batchSize: critic.batchSize,
              critic: checkpoint,
              ...(prompts ? { prompts } : {}),
              ...(secrets.criticApiKey ? { apiKey: secrets.criticApiKey } : {}),
              signal: activitySignal(),
            });
          },
          critic.batchSize,
          true,
        );
      case 'none':
        // filterTasksByCritic keeps the candidates without asking a critic.
        return {
          valuesTasks: false,
          trainedByCampaign: false,
          values: () => Promise.reject(new Error('models.critic.backend is none: no critic values states')),
        };
    }
  }

  function ormOf(orm: ModelsConfig['orm']): OrmRole {
    switch (orm.backend) {
      case 'embedded':
        return {
          trainedByCampaign: true,
          async judge(checkpoint, items) {
            return { verdicts: await (await models.orm(checkpoint)).judge(states(items)), failures: [] };
          },
        };
      case 'chat':
        return {
          trainedByCampaign: false,
          async judge(_checkpoint, items) {
            const judge = createChatOrm({
              ...chatOptions(orm, secrets, activitySignal()),
              topLogprobs: orm.topLogprobs,
              actionTargets: orm.actionTargets,
              concurrency: orm.concurrency,
              ...(orm.maxObservationChars !== undefined ? { maxObservationChars: orm.maxObservationChars } : {}),
            });
            return withHeartbeats(() => ({ judging: items.length }), judgeEach(judge, items, orm.concurrency));
          },
        };
    }
  }

  /** How a completions actor's records' prompts were written, and a configured context as the trainer's max length too. */
  function recordFormatOf(actor: ModelsConfig['actor']): Pick<ExternalActorJob, 'promptFormat' | 'maxLength'> {
    switch (actor.backend) {
      case 'embedded':
        return {};
      case 'completions':
        return { promptFormat: actor.promptFormat, ...(typeof actor.contextTokens === 'number' ? { maxLength: actor.contextTokens } : {}) };
    }
  }

  function trainerOf(trainer: ModelsConfig['trainer'], actor: ExternalActorJob): Trainer {
    switch (trainer.backend) {
      case 'embedded':
        return embeddedTrainer(ctx);
      case 'external':
        return externalTrainer(ctx, trainer, actor);
    }
  }

  function taskGeneratorOf(generator: ModelsConfig['taskGenerator']): TaskGenerator | undefined {
    switch (generator.backend) {
      case 'embedded':
        return undefined;
      case 'chat':
        return createChatTaskGenerator(generator, () => chatOptions(generator, secrets, activitySignal()));
    }
  }

  function feasibilityOf(feasibility: ModelsConfig['feasibility']): FeasibilityJudge | undefined {
    switch (feasibility.backend) {
      case 'none':
        return undefined;
      case 'chat':
        return {
          model: feasibility.model,
          judge: (tasks) =>
            judgeFeasibility(tasks, {
              ...chatOptions(feasibility, secrets, activitySignal()),
              batchSize: feasibility.batchSize,
              concurrency: feasibility.concurrency,
              keepUnjudged: feasibility.keepUnjudged,
            }),
        };
    }
  }

  function servingOf(serving: ModelsConfig['serving']): ActorServing | undefined {
    switch (serving.backend) {
      case 'none':
        return undefined;
      case 'vllm-lora':
        return vllmLoraServing(ctx, serving, secrets);
      case 'command':
        return commandServing(ctx, serving, secrets);
    }
  }

  function resolve(config: ModelsConfig): ModelRoles {
    const serving = servingOf(config.serving);
    const actor = actorOf(config.actor, serving);
    return {
      actor,
      critic: criticOf(config.critic, actor.prompts),
      orm: ormOf(config.orm),
      trainer: trainerOf(config.trainer, {
        trainsFromRecords: actor.prompts !== undefined,
        maxLoraRank: serving?.maxLoraRank,
        ...recordFormatOf(config.actor),
      }),
      taskGenerator: taskGeneratorOf(config.taskGenerator),
      feasibility: feasibilityOf(config.feasibility),
      serving,
    };
  }

  return (config) => {
    const key = JSON.stringify(config.models);
    let roles = resolved.get(key);
    if (!roles) {
      roles = resolve(config.models);
      resolved.set(key, roles);
    }
    return roles;
  };
}
