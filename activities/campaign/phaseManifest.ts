/**
 * The phase manifest: the one object that publishes a finished phase (written last, by publishPhase).
 * Its content is deterministic for a given campaign config and seed: references, counts and metrics,
 * no timestamps, so two runs of the same campaign can be compared manifest by manifest.
 */
import type { CarryOver, PhaseSummary } from '../../workflows/campaignTypes';
import type { DatasetRef } from '../../storage/keys';
import type { TrainerMetrics } from '../../models/train/trainerMetrics';
import type { ServedModels } from './contract';

export interface PhaseManifestData {
  campaignId: string;
  phase: number;
  /** sha256 of the frozen campaign config the phase ran under (absent in phases published before it existed). */
  configSha256?: string;
  summary: PhaseSummary;
  carry: CarryOver;
  artifacts: {
    tasks: DatasetRef;
    rewards: DatasetRef;
    experience: DatasetRef;
    evaluation: string;
  };
  /** The served name of the phase's actor and its checkpoint (models.serving other than none). */
  served?: ServedModels;
  /**
   * What training the phase's actor did (steps taken and skipped, positive rows by source, KL per token);
   * null when the phase did not train it or its trainer did not tell. Absent in phases published before it existed.
   */
  training?: { actor: TrainerMetrics | null };
  /** Set when the phase was published by another campaign and taken over by a fork of it. */
  forkedFrom?: { campaign: string; phase: number };
}
