/**
 * The phase manifest: the one object that publishes a finished phase (written last). Its content is
 * deterministic for a given campaign config and seed: references, counts and metrics, no timestamps,
 * so two runs of the same campaign can be compared manifest by manifest.
 */
import type { CarryOver, DatasetRef, PhaseSummary } from '../workflows/campaignTypes';
import type { ArtifactStore, Manifest } from '../storage/artifactStore';
import type { ServedModels } from '../activities/campaign/contract';
import type { TrainerMetrics } from '../models/train/trainerMetrics';
import { phaseKey } from '../storage/keys';

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

export function phaseManifestKey(campaignId: string, phase: number): string {
  return phaseKey(campaignId, phase, 'manifest.json');
}

/** Every published phase of a campaign, in phase order. */
export async function readPhaseManifests(store: ArtifactStore, campaignId: string): Promise<Manifest<PhaseManifestData>[]> {
  const phases: number[] = [];
  for await (const { key } of store.list(`campaigns/${campaignId}/`)) {
    const match = /\/phase-(\d+)\/manifest\.json$/.exec(key);
    if (match) phases.push(Number(match[1]));
  }
  phases.sort((a, b) => a - b);
  const manifests: Manifest<PhaseManifestData>[] = [];
  for (const phase of phases) {
    const manifest = await store.readManifest<PhaseManifestData>(phaseManifestKey(campaignId, phase));
    if (manifest) manifests.push(manifest);
  }
  return manifests;
}
