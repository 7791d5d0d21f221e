/** Reads the campaign's published phases (their manifests: activities/campaign/phaseManifest.ts). */
import type { ArtifactStore, Manifest } from '../storage/artifactStore';
import type { PhaseManifestData } from '../activities/campaign/phaseManifest';
import { phaseManifestKey } from '../storage/keys';

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
