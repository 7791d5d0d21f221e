/**
 * What the campaign workflow and its activities pass each other: references to artifacts in the store
 * and small numbers, never data. Everything here must stay small (payloads and histories are bounded).
 */
import type { DatasetRef } from '../storage/keys';

/** Settings the workflow itself acts on; the rest of the campaign config is read by activities from S3. */
export interface PhaseSettings {
  /** Tasks rolled out per phase: at most this many candidates pass the critic filter. */
  tasksPerPhase: number;
  /** Candidates generated per phase = tasksPerPhase x this; the critic filter keeps at most tasksPerPhase. */
  candidateFactor: number;
  /** Keep a task when the critic's value at its start lies in [low, high]. */
  criticBand: [number, number];
  /** Tasks per rollout shard (one activity each). */
  rolloutShardSize: number;
  /** Rollout shards in flight at once. */
  rolloutShardsInFlight: number;
  /** Sampling temperature of the actor during training rollouts. */
  temperature: number;
  /** Self-evolving curriculum on; off = tasks drawn from the train split (the ablation). */
  curriculum: boolean;
  /** Replay-buffer perplexity band: keep replayed steps with low < rank <= high, rank = exp(mean log-prob). */
  replayRankBand: [number, number];
  /** Replayed steps are capped at this multiple of the current phase's steps. */
  replayCap: number;
}

/** The models a phase ends with: keys of .onnx files, each with a .json card beside it. */
export interface ModelRefs {
  actor: string;
  critic: string;
  orm: string;
}

/** The numbers a published phase reports. */
export interface PhaseNumbers {
  successRate: number;
  perSite: Record<string, number>;
  tasksGenerated: number;
  tasksKept: number;
  trajectories: number;
  rolloutSuccesses: number;
  trainingSteps: number;
  replayedSteps: number;
}

export interface PhaseSummary extends PhaseNumbers {
  phase: number;
  manifestKey: string;
}

/** What one phase hands the next (besides models): where the curriculum and replay buffer stand. */
export interface CarryOver {
  models: ModelRefs;
  failedTasks: DatasetRef;
  replayBuffer: DatasetRef;
}

export type CampaignStatus = 'running' | 'paused' | 'waiting-for-operator' | 'stopping' | 'completed' | 'stopped';

export interface PhaseFailure {
  phase: number;
  activity: string;
  message: string;
  type?: string;
}

/** The whole state a campaign run carries into continue-as-new: a few hundred bytes per phase. */
export interface CampaignInput {
  campaignId: string;
  /** S3 key of the frozen campaign config (activities read it; the workflow never does I/O). */
  configKey: string;
  /** sha256 of the frozen config's bytes; activities refuse a config that does not match (absent in runs started before it existed). */
  configSha256?: string;
  seed: number;
  /** RL phases after SFT (phase 0). */
  phases: number;
  settings: PhaseSettings;
  /** The phase this run starts with. */
  nextPhase: number;
  carry?: CarryOver;
  history: PhaseSummary[];
  paused: boolean;
  stopAfterPhase: boolean;
  /** The environment runs resets and health checks before each phase and its evaluation (the `webarena` backend). */
  environmentChecks?: boolean;
  /** The browser and train activities' heartbeat timeout (temporal.heartbeatTimeoutSeconds); absent in runs started before it existed: 30. */
  heartbeatTimeoutSeconds?: number;
}

export interface CampaignProgress {
  campaignId: string;
  status: CampaignStatus;
  phase: number;
  phases: number;
  activity: string | null;
  counts: Record<string, number>;
  history: PhaseSummary[];
  failure: PhaseFailure | null;
  settings: PhaseSettings;
  pendingSettings: Partial<PhaseSettings> | null;
}
