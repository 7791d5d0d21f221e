/**
 * A tiny campaign on the real stack, for tests: few tasks, short episodes, few epochs, sites on free
 * ports. Its config is the product's config with smaller numbers, nothing else.
 */
import { parseConfig } from '../../config/load';
import type { Config } from '../../config/schema';
import { freePort } from '../../infra/processes';
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
