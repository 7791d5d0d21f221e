/**
 * Trajectories streamed to the artifact store: one JSONL object per trajectory under a prefix
 * (e.g. campaigns/<id>/phase-<k>/traces/<shard>/), screenshots beside them. A retried episode writes
 * the same key again, so a trajectory is never stored twice. Given `actionsPrefix`, WebRL's score file
 * `<actionsPrefix><trace id>.json` is stored too (browser/traces.ts ScoreRecord).
 */
import type { ScoreRecord, TraceSink } from '../browser/traces';
import type { ArtifactStore } from './artifactStore';

function safeName(traceId: string): string {
  return traceId.replace(/[^\w.=-]/g, '_');
}

export class StoreTraceSink implements TraceSink {
  constructor(
    private readonly store: ArtifactStore,
    private readonly prefix: string,
    private readonly actionsPrefix?: string,
  ) {
    if (actionsPrefix !== undefined) {
      this.writeScore = async (traceId, record) => {
        const key = `${actionsPrefix}${safeName(traceId)}.json`;
        await this.store.putJson(key, record);
        return { key };
      };
    }
  }

  writeScore?: (traceId: string, record: ScoreRecord) => Promise<{ key: string }>;

  keyOf(traceId: string): string {
    return `${this.prefix}${safeName(traceId)}.jsonl`;
  }

  async writeTrajectory(traceId: string, rows: AsyncIterable<object> | Iterable<object>): Promise<{ key: string }> {
    const key = this.keyOf(traceId);
    await this.store.writeJsonl(key, rows);
    return { key };
  }

  async writeScreenshot(traceId: string, index: number, png: Uint8Array): Promise<{ key: string }> {
    const key = `${this.prefix}${safeName(traceId)}/step-${index}.png`;
    await this.store.putBytes(key, Buffer.from(png), 'image/png');
    return { key };
  }

  async writeFile(traceId: string, name: string, text: string): Promise<{ key: string }> {
    const key = `${this.prefix}${safeName(traceId)}/${safeName(name)}`;
    await this.store.putBytes(key, Buffer.from(text), name.endsWith('.har') || name.endsWith('.json') ? 'application/json' : 'text/plain');
    return { key };
  }
}
