/**
 * What every campaign activity shares: the artifact store, a local working directory, the frozen
 * campaign config (read once from S3 per worker), datasets as JSONL in the store, model files cached
 * locally by key, and the rule that makes activities idempotent: an output published under a manifest
 * is returned as it is, never produced twice.
 */
import { ApplicationFailure } from '@temporalio/activity';
import { mkdir, rename } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { configSha256 } from '../../config/frozen';
import { cachedUnlessFailed } from './retryableCache';
import { parseConfig } from '../../config/load';
import type { Config } from '../../config/campaignConfig';
import type { EnvironmentTask, Split } from '../../env/backends/contract';
import { backendOf } from '../../env/backends/registry';
import type { ArtifactStore, ObjectInfo } from '../../storage/artifactStore';
import { manifestKey, phaseKey } from '../../storage/keys';
import type { DatasetRef, PhaseScope } from '../../storage/keys';

export class CampaignContext {
  private readonly configs = new Map<string, Promise<Config>>();
  private readonly taskSplits = new Map<string, Promise<EnvironmentTask[]>>();

  constructor(
    readonly store: ArtifactStore,
    /** Local scratch space (model files, training state); safe to lose. */
    readonly workDir: string,
  ) {}

  /**
   * The campaign's frozen config; with a checksum (every scope of a campaign started since there is
   * one), a stored config that does not match it is refused: the activity must not run under a
   * config other than the one its workflow was started with.
   */
  config(ref: { configKey: string; configSha256?: string }): Promise<Config> {
    return cachedUnlessFailed(this.configs, `${ref.configKey}#${ref.configSha256 ?? ''}`, async () => {
      const bytes = await this.store.getBytes(ref.configKey);
      const sha256 = configSha256(bytes);
      if (ref.configSha256 && sha256 !== ref.configSha256) {
        throw ApplicationFailure.nonRetryable(
          `the stored campaign config ${ref.configKey} (sha256 ${sha256}) is not the one this campaign was started with (sha256 ${ref.configSha256})`,
          'ConfigMismatch',
        );
      }
      return parseConfig(JSON.parse(bytes.toString('utf8')), ref.configKey);
    });
  }

  /** A split of the campaign's environment, from its backend's task source (loaded once per worker). */
  async tasks(config: Config, split: Split): Promise<EnvironmentTask[]> {
    const { backend, settings } = backendOf(config);
    return cachedUnlessFailed(this.taskSplits, backend.tasks.key(settings, split), () => backend.tasks.load(settings, split, this.store));
  }

  /**
   * Local scratch of one kind for this store: keys are relative to a bucket and prefix, so two stores
   * (another prefix, another bucket) sharing a work directory never read each other's files.
   */
  localRoot(kind: 'cache' | 'training'): string {
    return join(this.workDir, kind, this.store.bucket, this.store.prefix);
  }

  key(scope: PhaseScope, ...parts: string[]): string {
    return phaseKey(scope.campaignId, scope.phase, ...parts);
  }

  async writeDataset(key: string, rows: Iterable<unknown> | AsyncIterable<unknown>): Promise<DatasetRef> {
    const info = await this.store.writeJsonl(key, rows);
    return { key, count: info.lines, sha256: info.sha256 };
  }

  async readDataset<T>(ref: DatasetRef): Promise<T[]> {
    const rows: T[] = [];
    for await (const row of this.store.readJsonl<T>(ref.key)) rows.push(row);
    return rows;
  }

  /** The manifest entries of written datasets (their stored sizes, and the hashes taken when writing). */
  async datasetObjects(...refs: DatasetRef[]): Promise<ObjectInfo[]> {
    return Promise.all(refs.map(async (ref) => ({ key: ref.key, bytes: (await this.store.head(ref.key)).bytes, sha256: ref.sha256 })));
  }

  /** A local copy of a stored file (and of its card, for models), fetched once per worker. */
  async localFile(key: string, options: { withCard?: boolean } = {}): Promise<string> {
    const path = join(this.localRoot('cache'), key);
    if (!existsSync(path)) {
      await mkdir(dirname(path), { recursive: true });
      if (options.withCard) await this.store.downloadFile(cardKey(key), cardKey(path));
      const partial = `${path}.download`;
      await this.store.downloadFile(key, partial);
      await rename(partial, path);
    }
    return path;
  }

  /** Uploads a trained model (.onnx and its .json card) under `key`. */
  async uploadModel(localOnnx: string, key: string): Promise<ObjectInfo[]> {
    const card = await this.store.uploadFile(cardKey(key), cardKey(localOnnx), { contentType: 'application/json' });
    const model = await this.store.uploadFile(key, localOnnx);
    return [model, card];
  }

  /**
   * Returns the published output at `key`, or produces it, publishes its manifest (data first,
   * manifest last) and returns it. A retried or replayed activity therefore never redoes finished work.
   */
  async once<T>(key: string, produce: () => Promise<{ objects: ObjectInfo[]; data: T }>): Promise<T> {
    const published = await this.store.readManifest<T>(manifestKey(key));
    if (published) return published.data;
    const { objects, data } = await produce();
    return (await this.store.publishManifest(manifestKey(key), objects, data)).data;
  }
}

export function cardKey(onnxKey: string): string {
  return onnxKey.replace(/\.onnx$/, '.json');
}
