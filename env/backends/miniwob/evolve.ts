/**
 * The curriculum over MiniWoB++ (WebRL's self-evolving curriculum, where a task is a task type and a
 * seed): each new task draws a task type with weight equal to the number of the request's failed tasks
 * of that type (types the actor never failed get none), then a seed of that type from the train seed
 * range, uniformly among the instances not drawn yet and not among the failed ones themselves (a new
 * instance of a type the actor fails; the failed instances themselves once a type has no other left).
 * Only train-split instances are drawn, so a test seed is never
 * asked. Deterministic for the request's seed and failed tasks; ids count up from `firstTaskId`.
 *
 * Types the actor half-knows come first: a type it failed but also solved in the same rollouts (the
 * request's `solved`) is half-known; one it failed every time there is unsolved. While a half-known type
 * has instances left, no prefix of the drawn tasks holds more than a quarter of unsolved types
 * (UNSOLVED_SHARE): a draw that would exceed it is drawn again among the half-known types. RL learns
 * from successes only, and an unsolved type gives none at the current policy, so most of a phase goes
 * where rollouts succeed and fail; a quarter still explores the rest (docs/miniwob.md). With no solved
 * task known, every failed type is unsolved and the weighting is the failures' alone.
 *
 * A new task is the train split's task for its type and seed, so its intent (and oracle plan) is the
 * one the task source read from the seeded page (`loadMiniwobTasks`): no page is loaded here (the
 * backend's `evolve` is synchronous), and the intent is what the episode's page will show. The
 * request's `knownIntents` cannot rule tasks out: the campaign's train split is every instance of the
 * train range, so every intent drawable here is in it already (docs/miniwob.md).
 */
import { Rng } from '../../random';
import type { EnvironmentTask, EvolveRequest } from '../contract';
import { miniwobTaskId, parseMiniwobStartUrl, type MiniwobTaskRef } from './episode';
import type { SeedRange } from './settings';

/** The task type and seed of a miniwob task, or undefined when it is not one (a start URL of another backend). */
export function miniwobRefOf(task: EnvironmentTask): MiniwobTaskRef | undefined {
  try {
    return parseMiniwobStartUrl(task.start_url);
  } catch {
    return undefined;
  }
}

/** The most of a phase's draws, in any prefix, that go to unsolved types while a half-known type is left. */
export const UNSOLVED_SHARE = 0.25;

/** Tasks per task type (failed or solved ones), counting only the campaign's types. */
export function tasksByType(tasks: readonly EnvironmentTask[], types: readonly string[]): Map<string, number> {
  const allowed = new Set(types);
  const counts = new Map<string, number>();
  for (const task of tasks) {
    const ref = miniwobRefOf(task);
    if (ref && allowed.has(ref.type)) counts.set(ref.type, (counts.get(ref.type) ?? 0) + 1);
  }
  return counts;
}

export interface MiniwobEvolveInput {
  /** The campaign's task types. */
  types: readonly string[];
  /** The train seed range. */
  seeds: SeedRange;
  /** The loaded train split (its tasks' intents read from their seeded pages). */
  train: readonly EnvironmentTask[];
  request: EvolveRequest;
}

export function evolveMiniwobTasks({ types, seeds, train, request }: MiniwobEvolveInput): EnvironmentTask[] {
  const weights = tasksByType(request.failed, types);
  const solved = tasksByType(request.solved ?? [], types);
  if (weights.size === 0 || request.count <= 0) return [];
  const failedIds = new Set(request.failed.map(miniwobRefOf).flatMap((ref) => (ref ? [miniwobTaskId(ref)] : [])));
  // The train instances of each failed type in split order: those not failed first, then the failed ones.
  const fresh = new Map<string, EnvironmentTask[]>();
  const again = new Map<string, EnvironmentTask[]>();
  for (const task of train) {
    const ref = miniwobRefOf(task);
    if (!ref || !weights.has(ref.type) || ref.seed < seeds.from || ref.seed >= seeds.to) continue;
    const pools = failedIds.has(miniwobTaskId(ref)) ? again : fresh;
    pools.set(ref.type, [...(pools.get(ref.type) ?? []), task]);
  }
  const poolOf = (type: string) => (fresh.get(type)?.length ? fresh.get(type)! : (again.get(type) ?? []));
  const rng = new Rng(request.seed).fork('miniwob-evolve');
  const created: EnvironmentTask[] = [];
  const order = [...weights.keys()].sort();
  const halfKnown = (type: string) => solved.has(type);
  let unsolvedDrawn = 0;
  for (let i = 0; i < request.count; i++) {
    const open = order.filter((type) => poolOf(type).length > 0).map((type) => [type, weights.get(type)!] as const);
    if (open.length === 0) break;
    let type = rng.weighted(open);
    if (!halfKnown(type)) {
      const halfKnownOpen = open.filter(([t]) => halfKnown(t));
      // Over the share while a half-known type is left: drawn again among those.
      if (halfKnownOpen.length > 0 && unsolvedDrawn + 1 > Math.floor((i + 1) * UNSOLVED_SHARE)) type = rng.weighted(halfKnownOpen);
      else unsolvedDrawn++;
    }
    const pool = poolOf(type);
    const [picked] = pool.splice(rng.int(0, pool.length - 1), 1);
    const ref = miniwobRefOf(picked!)!;
    created.push({ ...picked!, task_id: request.firstTaskId + created.length, evolved_from: miniwobTaskId(ref) });
  }
  return created;
}
