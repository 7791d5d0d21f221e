/**
 * The storage layout. Keys depend only on (campaign, phase, activity, shard, ...), never on time or
 * attempt, so a retried or replayed activity finds its own finished output.
 *
 *   campaigns/<campaign>/config.json
 *   campaigns/<campaign>/phase-<k>/...
 *   campaigns/<campaign>/phase-<k>/manifest.json   (written last)
 */

/** A JSONL artifact, how many rows it holds, and its checksum (manifests are content-addressed). */
export interface DatasetRef {
  key: string;
  count: number;
  sha256: string;
}

/** Identifies one unit of work; every output key of an activity derives from it and nothing else. */
export interface PhaseScope {
  campaignId: string;
  configKey: string;
  configSha256?: string;
  phase: number;
  seed: number;
}

const SEGMENT = /^[A-Za-z0-9._=-][A-Za-z0-9._=+-]*$/;

function checkSegments(parts: string[]): string {
  for (const part of parts) {
    for (const segment of part.split('/')) {
      if (!SEGMENT.test(segment) || segment === '.' || segment === '..') {
        throw new Error(`invalid storage key segment '${segment}' in '${parts.join('/')}'`);
      }
    }
  }
  return parts.join('/');
}

export function campaignKey(campaignId: string, ...parts: string[]): string {
  return checkSegments(['campaigns', campaignId, ...parts]);
}

export function phaseKey(campaignId: string, phase: number, ...parts: string[]): string {
  if (!Number.isInteger(phase) || phase < 0) throw new Error(`invalid phase number ${phase}`);
  return campaignKey(campaignId, `phase-${phase}`, ...parts);
}

/** The manifest a phase publishes last (the campaign's progress: a phase is done once it exists). */
export function phaseManifestKey(campaignId: string, phase: number): string {
  return phaseKey(campaignId, phase, 'manifest.json');
}

/** The manifest that publishes a unit of work: readers trust only what a manifest lists. */
export function manifestKey(dataKey: string): string {
  return `${dataKey}.manifest.json`;
}
