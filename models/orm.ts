/**
 * The outcome reward model: P(YES | intent, action history, final observation). The state it reads is
 * the episode's outcome state (`outcomeState`): its history holds every action (the final `exit`
 * included) with what each acted on, and its observation is the final page. WebRL's reward is 1 when
 * P(YES) >= 0.5, else 0. A trained ORM's card may carry a correction for task types it never trained on
 * (models/train/unseenTypeCalibration.ts); `judge` applies it.
 */
import { describeTarget } from './actionTarget';
import type { ModelHandle } from './checkpoint';
import { sigmoid } from './engine';
import { featurizeOutcomes, taskType } from './featurizer';
import { parsedAction, type ModelState } from './state';

/** One policy call of an episode: the state shown and the raw reply. */
export interface EpisodeRound {
  state: ModelState;
  response: string;
}

/** What the ORM reads of an episode: the intent, every action with its target on the page it was chosen on, and the last page seen. */
export function outcomeState(intent: string, rounds: readonly EpisodeRound[]): ModelState | null {
  const last = rounds[rounds.length - 1];
  if (!last) return null;
  const history = rounds.map((round) => {
    const action = parsedAction(round.response);
    const target = describeTarget(action, round.state.observation);
    return target ? { response: round.response, action, target } : { response: round.response, action };
  });
  return { intent, history, observation: last.state.observation };
}

export interface OrmVerdict {
  pYes: number;
  reward: 0 | 1;
}

/** What the local and remote ORMs offer. */
export interface OutcomeJudge {
  judge(outcomeStates: readonly ModelState[]): Promise<OrmVerdict[]>;
}

export function verdict(pYes: number): OrmVerdict {
  return { pYes, reward: pYes >= 0.5 ? 1 : 0 };
}

/** p with `offset` added to its logit; p = 0 or 1 stays as it is. */
function shiftLogit(p: number, offset: number): number {
  if (p <= 0 || p >= 1) return p;
  return sigmoid(Math.log(p / (1 - p)) + offset);
}

export class Orm implements OutcomeJudge {
  private readonly knownTaskTypes?: ReadonlySet<string>;
  private readonly unseenTypeOffset: number;

  constructor(readonly model: ModelHandle) {
    const calibration = model.card?.calibration;
    if (calibration) this.knownTaskTypes = new Set(calibration.knownTaskTypes);
    this.unseenTypeOffset = calibration?.unseenTypeLogitOffset ?? 0;
  }

  async judge(outcomeStates: readonly ModelState[]): Promise<OrmVerdict[]> {
    if (outcomeStates.length === 0) return [];
    const output = await this.model.engine.run(featurizeOutcomes(outcomeStates));
    return outcomeStates.map((state, i) => {
      const unseen = this.knownTaskTypes !== undefined && !this.knownTaskTypes.has(taskType(state.intent));
      return verdict(unseen ? shiftLogit(output[i]!, this.unseenTypeOffset) : output[i]!);
    });
  }
}
