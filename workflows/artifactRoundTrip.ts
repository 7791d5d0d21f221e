/**
 * A deployment check: stream a generated file of the given size into the store by multipart upload,
 * read it back, and compare checksums. It exercises what every campaign relies on (a worker reaching
 * Temporal and S3, heartbeats, idempotent publishing) in a minute.
 */
import { ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type { ArtifactActivities, ArtifactReport, GeneratedArtifactInput } from '../activities/artifactTransfer';
import { INFRASTRUCTURE_RETRY } from './retryPolicies';

const { uploadGeneratedArtifact, checksumArtifact } = proxyActivities<ArtifactActivities>({
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '5 seconds',
  retry: INFRASTRUCTURE_RETRY,
});

export interface RoundTripResult {
  uploaded: ArtifactReport;
  readBack: ArtifactReport;
}

export async function artifactRoundTrip(input: GeneratedArtifactInput): Promise<RoundTripResult> {
  const uploaded = await uploadGeneratedArtifact(input);
  const readBack = await checksumArtifact({ key: uploaded.key });
  if (readBack.sha256 !== uploaded.sha256 || readBack.bytes !== uploaded.bytes) {
    throw ApplicationFailure.nonRetryable(
      `read-back of ${uploaded.key} differs: ${readBack.bytes} bytes sha256 ${readBack.sha256}, uploaded ${uploaded.bytes} bytes sha256 ${uploaded.sha256}`,
      'ChecksumMismatch',
    );
  }
  return { uploaded, readBack };
}
