/**
 * The outcome reward model: P(YES | intent, action history, final observation). The state it reads is
 * the episode's last state: its history holds every action (the final `exit` included) and its
 * observation is the final page. WebRL's reward is 1 when P(YES) >= 0.5, else 0.
 */
import type { ModelHandle } from './checkpoint';
import { featurizeOutcomes } from './featurizer';
import type { ModelState } from './state';

export interface OrmVerdict {
  pYes: number;
  reward: 0 | 1;
}

/** What the local and remote ORMs offer. */
export interface OutcomeJudge {
  judge(finalStates: readonly ModelState[]): Promise<OrmVerdict[]>;
}

export function verdict(pYes: number): OrmVerdict {
  return { pYes, reward: pYes >= 0.5 ? 1 : 0 };
}

export class Orm implements OutcomeJudge {
  constructor(readonly model: ModelHandle) {}

  async judge(finalStates: readonly ModelState[]): Promise<OrmVerdict[]> {
    if (finalStates.length === 0) return [];
    const output = await this.model.engine.run(featurizeOutcomes(finalStates));
    return finalStates.map((_, i) => verdict(output[i]!));
  }
}
