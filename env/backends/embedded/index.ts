/**
 * The embedded backend: the four mini sites each browser worker starts for the campaign's world seed,
 * an isolated state per episode, task splits generated from the world seed (every task with an oracle
 * plan), and the curriculum's own evolution of failed tasks over that world.
 */
import { EmbeddedEnvironment } from '../../embedded';
import { DeterministicJudge } from '../../evaluators/judge';
import { EMBEDDED_SHOP_ADMIN_ACCOUNT } from '../../sites/shopping/rest';
import { evolveTasks } from '../../tasks/evolve';
import { generateSplits } from '../../tasks/generate';
import { withOraclePlans } from '../../tasks/schema';
import type { EnvironmentBackend, EnvironmentTask, Split } from '../contract';
import { embeddedSettings } from './settings';

/** Its member of `campaign.environment`. */
export { embeddedSettings as settings };

const splits = new Map<number, Record<Split, EnvironmentTask[]>>();

/** A split of the embedded world of `worldSeed` (generated once per process). */
export function embeddedSplit(worldSeed: number, split: Split): EnvironmentTask[] {
  let generated = splits.get(worldSeed);
  if (!generated) {
    generated = generateSplits(worldSeed);
    splits.set(worldSeed, generated);
  }
  return generated[split];
}

export const backend: EnvironmentBackend<typeof embeddedSettings> = {
  name: 'embedded',
  settings: embeddedSettings,
  tasks: {
    key: (settings, split) => `embedded:${settings.worldSeed}:${split}`,
    load: async (settings, split) => embeddedSplit(settings.worldSeed, split),
  },
  scoring: () => ({ judge: new DeterministicJudge(), harness: 'webarena-lite', shopAdmin: EMBEDDED_SHOP_ADMIN_ACCOUNT }),
  async open(workers, services, settings, tasks) {
    const sites = await workers.embeddedSites(settings.worldSeed);
    const { judge } = backend.scoring(settings, services);
    return { environment: new EmbeddedEnvironment({ siteUrls: sites.urls, tasks, judge }), siteUrls: sites.urls };
  },
  oracle: { demonstrable: withOraclePlans },
  evolve: (settings, request) => evolveTasks({ ...request, worldSeed: settings.worldSeed }),
  // The sites start inside each worker: nothing to reach before the campaign starts.
  check: async () => [],
  checkSubject: 'embedded sites',
};
