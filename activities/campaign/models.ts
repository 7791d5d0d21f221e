/**
 * Models by storage key, loaded once per worker (ONNX sessions are reused across activities); a load
 * that failed is tried again by the next activity that needs the model.
 */
import { Actor } from '../../models/actor';
import { loadModel, type ModelKind } from '../../models/checkpoint';
import { Critic } from '../../models/critic';
import { Orm, outcomeState } from '../../models/orm';
import type { ModelState } from '../../models/state';
import type { CampaignContext } from './context';
import { cachedUnlessFailed } from './retryableCache';
import type { TrajectoryRecord } from './episodes';

export class ModelCache {
  private readonly loaded = new Map<string, Promise<Actor | Critic | Orm>>();

  constructor(private readonly ctx: CampaignContext) {}

  private async load<T extends Actor | Critic | Orm>(key: string, kind: ModelKind, wrap: (handle: Awaited<ReturnType<typeof loadModel>>) => T): Promise<T> {
    return cachedUnlessFailed(this.loaded, key, async () => wrap(await loadModel(await this.ctx.localFile(key, { withCard: true }), { kind }))) as Promise<T>;
  }

  actor(key: string): Promise<Actor> {
    return this.load(key, 'actor', (handle) => new Actor(handle));
  }

  critic(key: string): Promise<Critic> {
    return this.load(key, 'critic', (handle) => new Critic(handle));
  }

  orm(key: string): Promise<Orm> {
    return this.load(key, 'orm', (handle) => new Orm(handle));
  }
}

export const GAMMA = 0.9;

/** Monte-Carlo return of step t of T with a terminal reward (WebRL: gamma = 0.9, sparse reward). */
export function monteCarloReturn(reward: number, t: number, steps: number): number {
  return reward * GAMMA ** (steps - 1 - t);
}

/** ORM training rows from evaluator-labelled trajectories (evaluator scores are 0 or 1). */
export function ormExamplesOf(records: readonly TrajectoryRecord[]): { state: ModelState; success: boolean }[] {
  return records.flatMap((record) => {
    const state = outcomeState(record.intent, record.rounds);
    return state ? [{ state, success: record.score === 1 }] : [];
  });
}

/** A critic training row: a state, its Monte-Carlo return, and which trajectory (its trace) and step it is. */
export interface CriticExample {
  state: ModelState;
  mcReturn: number;
  trajectory: string;
  step: number;
}

/**
 * Critic training rows: every step of evaluator-labelled trajectories with its Monte-Carlo return, named
 * by trajectory (an external trainer weighs each trajectory once: docs/webrl-fidelity.md).
 */
export function criticExamplesOf(records: readonly TrajectoryRecord[]): CriticExample[] {
  return records.flatMap((record) =>
    record.rounds.map((round, t) => ({
      state: round.state,
      mcReturn: monteCarloReturn(record.score, t, record.rounds.length),
      trajectory: record.traceKey,
      step: t,
    })),
  );
}
