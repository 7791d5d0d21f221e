/**
 * How the remote backends call their servers: the chat options of an endpoint, and calls made item by
 * item or batch by batch, where an item (a batch) the server cannot answer usefully costs that item
 * (null in the results, recorded as a failure) while a server that is down fails the whole call, so the
 * activity is retried and no item is lost to an outage.
 */
import type { BackendFailure, CriticRole, StateItem } from './roles';
import type { ModelSecrets } from '../../config/secrets';
import type { Heartbeats } from './contract';
import type { StateValueFunction } from '../critic';
import type { ChatOptions } from '../remote/chatText';
import { mapSettled } from '../remote/concurrency';
import { isServerUnavailable } from '../remote/retry';

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

/** Runs `work` item by item: an item whose call fails is null in the results and recorded, never thrown. */
export async function itemByItem<T extends { id: string }, R>(
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

export const statesOf = (items: readonly StateItem[]) => items.map((item) => item.state);

/**
 * A critic asked in batches, reporting its progress: a batch that fails costs that batch. `critic(checkpoint)` is the value
 * function of the campaign's checkpoint, or of the one critic a backend outside the campaign's
 * checkpoints has.
 */
export function batchedCritic(
  critic: (checkpoint: string) => Promise<StateValueFunction>,
  size: number,
  heartbeats: Heartbeats,
  trainedByCampaign = false,
): CriticRole {
  return {
    valuesTasks: true,
    trainedByCampaign,
    async values(checkpoint, items) {
      const valueFunction = await critic(checkpoint);
      const batches = Array.from({ length: Math.ceil(items.length / size) }, (_, b) => items.slice(b * size, (b + 1) * size));
      let unavailable: unknown;
      const settled = await heartbeats.withHeartbeats(
        () => ({ valuing: items.length }),
        mapSettled(batches, 1, (batch) =>
          valueFunction.values(statesOf(batch)).catch((error: unknown) => {
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
