/**
 * What one episode leaves behind: its outcome (score, end reason, answer) and its steps. browser/episode.ts
 * produces them, browser/traces.ts writes them as trajectory rows.
 */
import type { Action, EvaluationDetails } from './contract';
import type { InfrastructureReason } from './errors';
import type { ParseError } from './grammar';

/** How the episode's own part ended: by the agent, its limits, or the environment (`environment_ended`). */
export type AgentEndReason = 'exit' | 'environment_ended' | 'max_steps' | 'parse_failures' | 'repeated_actions' | 'deadline' | 'policy_error';
export type EndReason = AgentEndReason | InfrastructureReason;

export interface EpisodeOutcome {
  taskId: string | number;
  traceId: string;
  /** The evaluator's score; 0 when the episode was not evaluated. */
  score: number;
  steps: number;
  /** The last exit message, null when the agent never exited. */
  answer: string | null;
  /** The browser, page, environment or model endpoint failed: retry the episode. */
  infraFailure: boolean;
  reason: EndReason;
  detail?: string;
  /** What the environment's evaluator reported beside the score, when it does (MiniWoB++'s raw reward). */
  evaluation?: EvaluationDetails;
  /** Keys of the files the evaluator handed back, stored beside the trace (name -> key). */
  files?: Record<string, string>;
  durationMs: number;
  traceKey?: string;
}

export interface EpisodeStep {
  index: number;
  url: string;
  html: string;
  /** The completion prompt the policy answered. */
  prompt: string;
  /** Characters of the observation the prompt left out to fit the model's context (policies that cut). */
  observationCut?: number;
  response: string;
  action: Action | null;
  parseError: ParseError | null;
  /** Null when nothing was executed (parse failure, exit, repeated action). */
  execution: { ok: boolean; error?: string } | null;
  timings: { observeMs: number; policyMs: number; actionMs: number; settleMs: number };
  screenshot?: string;
}
