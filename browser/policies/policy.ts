/**
 * What the episode loop asks of an agent: given the task, the current observation and the history of the
 * episode, the raw model output (parsed afterwards by grammar.ts) and the prompt it was produced from.
 */
import type { Action, EpisodeTask, Observation, OracleStep } from '../contract';

/** A task as policies see it; the oracle replays `oracle`. */
export interface PolicyTask extends EpisodeTask {
  oracle?: OracleStep[];
}

/** One earlier round of the episode. */
export interface HistoryRound {
  /** The raw model output of that round. */
  response: string;
  /** Its parsed action, null when it did not parse. */
  action: Action | null;
}

export interface PolicyInput {
  task: PolicyTask;
  observation: Observation;
  history: readonly HistoryRound[];
  /** Aborted when the episode's deadline passes. */
  signal?: AbortSignal;
}

export interface PolicyOutput {
  /** The raw model output, as a model would emit it. */
  response: string;
  /** The completion prompt (webrl.md §4, or the model's chat template) the output answers. */
  prompt: string;
  /** Characters cut from the end of the observation to fit the prompt's budget (absent: the policy does not cut). */
  observationCut?: number;
}

export interface Policy {
  readonly name: string;
  act(input: PolicyInput): Promise<PolicyOutput>;
}

/** The policy cannot act on this task at all (an oracle step that matches no element, a missing plan). */
export class PolicyError extends Error {
  override name = 'PolicyError';
}
