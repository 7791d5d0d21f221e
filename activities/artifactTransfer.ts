/**
 * Activities that move large artifacts through the store: the pattern every checkpoint and trace
 * upload follows. Idempotent by manifest: a retry finds the published manifest and returns it; a
 * retry after a crash mid-upload aborts the orphaned multipart upload and streams again.
 */
import { Context } from '@temporalio/activity';
import { heartbeat } from './heartbeats';
import { Readable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import type { ArtifactStore, Manifest, ObjectInfo } from '../storage/artifactStore';
import { manifestKey } from '../storage/keys';

export interface GeneratedArtifactInput {
  key: string;
  bytes: number;
  seed: number;
  /** Caps the upload rate (bytes/s) so a check does not saturate a shared link; 0 = no cap. */
  throttleBytesPerSecond?: number;
}

export interface ArtifactReport {
  key: string;
  bytes: number;
  sha256: string;
}

/** Deterministic bytes from a seed (xorshift32), so any host can regenerate and compare them. */
export function seededByteStream(seed: number, total: number, throttleBytesPerSecond = 0, chunkSize = 1024 * 1024): Readable {
  let state = seed >>> 0 || 0x9e3779b9;
  let produced = 0;
  const started = Date.now();
  return new Readable({
    async read() {
      if (produced >= total) {
        this.push(null);
        return;
      }
      if (throttleBytesPerSecond > 0) {
        const due = started + (produced / throttleBytesPerSecond) * 1000;
        if (due > Date.now()) await delay(due - Date.now());
      }
      const size = Math.min(chunkSize, total - produced);
      const words = new Uint32Array(Math.ceil(size / 4));
      for (let i = 0; i < words.length; i++) {
        state ^= state << 13;
        state ^= state >>> 17;
        state ^= state << 5;
        words[i] = state >>> 0;
      }
      produced += size;
      this.push(Buffer.from(words.buffer, 0, size));
    },
  });
}

function heartbeatProgress(phase: string, total: number) {
  return (done: number) => heartbeat({ phase, bytesDone: done, bytesTotal: total });
}

export function createArtifactActivities(deps: { store: ArtifactStore }) {
  const { store } = deps;
  return {
    async uploadGeneratedArtifact(input: GeneratedArtifactInput): Promise<ArtifactReport> {
      const published = await store.readManifest<ArtifactReport>(manifestKey(input.key));
      if (published) return published.data;
      const aborted = await store.abortStaleUploads(input.key);
      if (aborted) Context.current().log.info('aborted stale multipart uploads', { key: input.key, aborted });
      const object: ObjectInfo = await store.uploadStream(input.key, seededByteStream(input.seed, input.bytes, input.throttleBytesPerSecond ?? 0), {
        onProgress: heartbeatProgress('upload', input.bytes),
      });
      const manifest: Manifest<ArtifactReport> = await store.publishManifest(manifestKey(input.key), [object], object);
      return manifest.data;
    },

    async checksumArtifact(input: { key: string }): Promise<ArtifactReport> {
      const { bytes } = await store.head(input.key);
      return store.checksum(input.key, { onProgress: heartbeatProgress('checksum', bytes) });
    },
  };
}

export type ArtifactActivities = ReturnType<typeof createArtifactActivities>;
