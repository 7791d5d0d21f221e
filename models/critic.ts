/**
 * The double critic: two heads V1, V2 (state, intent) in (0, 1), each a 2-way classifier of "this
 * state leads to success" (`mc_return > 0`). A 2-way softmax over logits (l0, l1) is sigmoid(l1 - l0), so
 * each head is one logit through a sigmoid and its cross-entropy is the binary one. WebRL's value is the
 * minimum of the heads; its curriculum filter keeps a task whose start state has either head in
 * [0.05, 0.75].
 */
import type { ModelHandle } from './checkpoint';
import { featurizeStates } from './featurizer';
import type { ModelState } from './state';

export interface CriticValues {
  v1: number;
  v2: number;
  /** min(v1, v2), the value the actor objective uses. */
  value: number;
}

/** What the local and remote critics offer. */
export interface StateValueFunction {
  values(states: readonly ModelState[]): Promise<CriticValues[]>;
}

export const CURRICULUM_BAND = { low: 0.05, high: 0.75 } as const;

/** The critic filter of task generation: too easy (> 0.75) and hopeless (< 0.05) tasks are dropped. */
export function keepForCurriculum(values: CriticValues): boolean {
  const inBand = (v: number) => v >= CURRICULUM_BAND.low && v <= CURRICULUM_BAND.high;
  return inBand(values.v1) || inBand(values.v2);
}

export function criticValues(v1: number, v2: number): CriticValues {
  return { v1, v2, value: Math.min(v1, v2) };
}

export class Critic implements StateValueFunction {
  constructor(readonly model: ModelHandle) {}

  async values(states: readonly ModelState[]): Promise<CriticValues[]> {
    if (states.length === 0) return [];
    const output = await this.model.engine.run(featurizeStates(states));
    return states.map((_, i) => criticValues(output[2 * i]!, output[2 * i + 1]!));
  }
}
