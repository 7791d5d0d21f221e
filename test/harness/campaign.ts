/**
 * A tiny campaign on the real stack, for tests: few tasks, short episodes, few epochs, sites on free
 * ports. Its config is the product's config with smaller numbers, nothing else.
 */
import assert from 'node:assert/strict';
import type { Client } from '@temporalio/client';
import type { TrajectoryRecord } from '../../activities/campaign/episodes';
import { campaignConfigKey, startCampaign } from '../../campaign/control';
import { readPhaseManifests } from '../../campaign/manifest';
import type { PhaseManifestData } from '../../activities/campaign/phaseManifest';
import { configSha256 } from '../../config/frozen';
import { parseConfig } from '../../config/load';
import type { Config } from '../../config/campaignConfig';
import { freePort } from '../../infra/processes';
import { ArtifactStore, type Manifest } from '../../storage/artifactStore';
import { runWorkers } from '../../workers/run';
import type { CampaignProgress } from '../../workflows/campaignTypes';
import type { TestStack } from './stack';

/** The same campaign stored elsewhere or run for another number of phases (same seed, same site ports). */
export function campaignVariant(config: Config, overrides: { phases?: number; prefix?: string }): Config {
  return parseConfig({
    ...config,
    campaign: { ...config.campaign, phases: overrides.phases ?? config.campaign.phases },
    s3: { ...config.s3, prefix: overrides.prefix ?? config.s3.prefix },
  });
}

export async function tinyCampaignConfig(stack: TestStack, name: string, overrides: { phases?: number; seed?: number } = {}): Promise<Config> {
  return parseConfig({
    campaign: {
      name,
      seed: overrides.seed ?? 7,
      phases: overrides.phases ?? 1,
      phase: { tasksPerPhase: 4, rolloutShardSize: 2, rolloutShardsInFlight: 2, criticBand: [0, 1] },
      environment: { testTasks: 4, demonstrationTasks: 16, maxSteps: 8, episodeDeadlineSeconds: 120 },
      training: { sftEpochs: 4, ormEpochs: 4, criticEpochs: 1, actorEpochs: 1, checkpointEvery: 4 },
    },
    stack: {
      dataDir: stack.dir,
      temporalPort: stack.config.stack.temporalPort,
      minioPort: stack.config.stack.minioPort,
    },
    s3: { bucket: stack.config.s3.bucket },
    concurrency: { browserContexts: 2 },
    sites: { ports: { shopping: await freePort(), shopping_admin: await freePort(), reddit: await freePort(), gitlab: await freePort() } },
  });
}

/** A run's phase manifests and the store they came from. */
export interface StoredRun {
  store: ArtifactStore;
  manifests: Manifest<PhaseManifestData>[];
}

/**
 * Two runs of campaign `name` stored under different prefixes (their configs differ only there): each
 * phase manifest names its own run's frozen config, and everything else in them is equal.
 */
export async function assertManifestsEqualBesideConfig(name: string, a: StoredRun, b: StoredRun): Promise<void> {
  for (const run of [a, b]) {
    const frozen = configSha256(await run.store.getBytes(campaignConfigKey(name)));
    assert.ok(
      run.manifests.every((m) => m.data.configSha256 === frozen),
      'each manifest names its own frozen config',
    );
  }
  const withoutConfig = (run: StoredRun) => run.manifests.map((m) => ({ ...m, data: { ...m.data, configSha256: undefined } }));
  assert.deepEqual(withoutConfig(a), withoutConfig(b));
}

/** A campaign run to its end by the three workers in this process, and what it stored. */
export interface FinishedCampaign {
  final: CampaignProgress;
  store: ArtifactStore;
  manifests: Manifest<PhaseManifestData>[];
  /** Every trajectory record the campaign stored, with its key. */
  records: { key: string; record: TrajectoryRecord }[];
  readJsonl<T>(key: string): Promise<T[]>;
}

/**
 * Runs `config`'s campaign with the control, browser and train workers in this process until the
 * workflow's own result, and hands `check` what it stored; the workers stop afterwards.
 */
export async function runCampaignToEnd(stack: TestStack, client: Client, config: Config, check: (run: FinishedCampaign) => Promise<void>): Promise<void> {
  const stop = new AbortController();
  const workers = runWorkers({ config, secrets: stack.secrets }, ['control', 'browser', 'train'], stop.signal);
  const store = new ArtifactStore(config.s3, stack.secrets.s3);
  try {
    const handle = await startCampaign(client, store, config);
    const final = (await client.workflow.getHandle(handle.workflowId).result()) as CampaignProgress;
    const records: FinishedCampaign['records'] = [];
    for await (const { key } of store.list(`campaigns/${config.campaign.name}/`)) {
      if (/\/trajectories\/[^/]+\.json$/.test(key)) records.push({ key, record: await store.getJson<TrajectoryRecord>(key) });
    }
    const readJsonl = async <T>(key: string) => {
      const rows: T[] = [];
      for await (const row of store.readJsonl<T>(key)) rows.push(row);
      return rows;
    };
    await check({ final, store, manifests: await readPhaseManifests(store, config.campaign.name), records, readJsonl });
  } finally {
    stop.abort();
    await workers;
    store.destroy();
  }
}
