/**
 * Experience: a trajectory's steps as the rows the experience filter, the replay buffer and the
 * trainer's records are made of (WebRL's reward on the last step, its Monte-Carlo return on each).
 */
import type { ModelState } from '../../models/state';
import type { TrajectoryRecord } from './episodes';
import { monteCarloReturn } from './models';

export interface ExperienceRow {
  taskId: string;
  state: ModelState;
  response: string;
  nextState: ModelState | null;
  reward: number;
  mcReturn: number;
  /** The trajectory this step belongs to, its place in it, its length and its reward (rows written before these were kept lack them). */
  traceId?: string;
  step?: number;
  steps?: number;
  trajectoryReward?: number;
  /** Set on the replay buffer's demonstrations (campaign.training.replayDemonstrations): their training records say so. */
  origin?: 'demonstration';
}

/** A trajectory's steps as experience: the reward on its last step, WebRL's Monte-Carlo return on each. */
export function experienceRowsOf(record: Pick<TrajectoryRecord, 'taskId' | 'traceKey' | 'rounds'>, reward: number): ExperienceRow[] {
  return record.rounds.map((round, t) => ({
    taskId: record.taskId,
    state: round.state,
    response: round.response,
    nextState: record.rounds[t + 1]?.state ?? null,
    reward: t === record.rounds.length - 1 ? reward : 0,
    mcReturn: monteCarloReturn(reward, t, record.rounds.length),
    traceId: record.traceKey,
    step: t,
    steps: record.rounds.length,
    trajectoryReward: reward,
  }));
}
