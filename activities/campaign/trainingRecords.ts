/**
 * Experience rows as training records (models/train/trainingRecord.ts): the prompt text the completions
 * actor sent in each state, the response it received, WebRL's Monte-Carlo return and the log-probs of
 * the response under the actor the phase trains from (its reference model).
 */
import type { PromptBuilder } from '../../browser/policies/promptBudget';
import type { ActionLogProb } from '../../models/actor';
import { statePrompt } from '../../models/remote/completionsActor';
import { monteCarloReturnWebRL, TRAINING_RECORD_SCHEMA_VERSION, type TrainingStepRecord } from '../../models/train/trainingRecord';
import type { ExperienceRow } from './experience';

export interface RecordScope {
  campaignId: string;
  phase: number;
  gamma: number;
  /** The actor's prompts, as its rollouts wrote them. */
  prompts: PromptBuilder;
}

/** A replayed row's source: a demonstration the buffer started with, or an earlier phase's success. */
export function replayedSource(row: ExperienceRow): 'replay' | 'demonstration' {
  return row.origin === 'demonstration' ? 'demonstration' : 'replay';
}

export async function stepRecordOf(
  row: ExperienceRow,
  source: TrainingStepRecord['source'],
  scored: ActionLogProb | null,
  scope: RecordScope,
): Promise<TrainingStepRecord> {
  // Rows kept before trajectories were recorded with their steps stand alone: a one-step trajectory.
  const traceId = row.traceId ?? `task-${row.taskId}`;
  const step = row.step ?? 0;
  const steps = row.steps ?? step + 1;
  return {
    schemaVersion: TRAINING_RECORD_SCHEMA_VERSION,
    kind: 'step',
    id: `${traceId}:${step}`,
    campaignId: scope.campaignId,
    phase: scope.phase,
    taskId: row.taskId,
    traceId,
    step,
    source,
    prompt: await statePrompt(scope.prompts, row.state),
    response: row.response,
    nextPrompt: row.nextState ? await statePrompt(scope.prompts, row.nextState) : null,
    reward: row.reward,
    done: row.nextState === null,
    mcReturn: monteCarloReturnWebRL(row.trajectoryReward ?? row.reward, step, steps, scope.gamma),
    refLogprob: scored?.logProb ?? null,
    responseTokens: scored?.tokens ?? null,
    rank: scored ? Math.exp(scored.meanTokenLogProb) : null,
    state: { ...row.state },
  };
}
