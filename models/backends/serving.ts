/**
 * What the serving backends (vllm-lora, command) share: where a deployment's record is stored, the
 * name each phase's actor is served under, and how a served name is made ready again when the actor
 * is asked for. A refusal fails the phase non-retryably with the server's message; a server error
 * (5xx) or an unreachable server is retried.
 */
import { ApplicationFailure } from '@temporalio/activity';
import type { ModelSecrets } from '../../config/secrets';
import { listServedModels, type ModelServerOptions } from '../remote/modelServer';
import type { Heartbeats, RoleStorage } from './contract';
import type { ActorServing, ServedModelRecord } from './roles';

export function servedRecordKey(checkpointKey: string): string {
  return `${checkpointKey}.served.json`;
}

export function servedName(campaignId: string, phase: number, role: 'actor'): string {
  return `${campaignId}-p${phase}-${role}`;
}

/** Fails the deployment for good, with the reason. */
export function refuse(message: string): never {
  throw ApplicationFailure.nonRetryable(message, 'DeploymentFailed');
}

/** Polls the server until it lists `name`, reporting the wait; refused once `timeoutMs` has passed. */
export async function waitUntilListed(server: ModelServerOptions, name: string, timeoutMs: number, pollMs: number, heartbeats: Heartbeats): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    try {
      if ((await listServedModels(server)).some((model) => model.id === name)) return;
      last = 'not listed';
    } catch (error) {
      last = (error as Error).message;
    }
    if (Date.now() >= deadline) refuse(`${name} was not listed by ${server.baseUrl}/models within ${Math.round(timeoutMs / 1000)} s (last: ${last})`);
    heartbeats.heartbeat({ waitingFor: name });
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

/** How to reach the serving backend's server, with the worker's key. */
export function serverOptions(serving: { baseUrl: string; timeoutMs?: number }, secrets: ModelSecrets): ModelServerOptions {
  return {
    baseUrl: serving.baseUrl,
    ...(secrets.llmApiKey ? { apiKey: secrets.llmApiKey } : {}),
    ...('timeoutMs' in serving ? { timeoutMs: serving.timeoutMs } : {}),
  };
}

/**
 * The name to ask the server for when acting with (or scoring) the checkpoint `checkpointKey`, or
 * undefined when it was never deployed (the configured model serves it), made ready by the serving
 * backend where it may have lost it.
 */
export async function servedActor(storage: RoleStorage, serving: ActorServing | undefined, checkpointKey: string): Promise<string | undefined> {
  const record = await storage.store.tryGetJson<ServedModelRecord>(servedRecordKey(checkpointKey));
  if (!record) return undefined;
  return serving ? serving.ready(record) : record.name;
}
