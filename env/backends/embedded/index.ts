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
import { type BackendSettings, type EnvironmentBackend, type Split, withOraclePlans } from '../contract';
import type { WebArenaTask } from '../../tasks/schema';
import { embeddedSettings, type EmbeddedSettings } from './settings';
import { embeddedSitesOf } from './workerSites';

/** Its member of `campaign.environment`. */
export { embeddedSettings as settings };

const splits = new Map<number, Record<Split, WebArenaTask[]>>();

/** A split of the embedded world of `worldSeed` (generated once per process). */
export function embeddedSplit(worldSeed: number, split: Split): WebArenaTask[] {
  let generated = splits.get(worldSeed);
  if (!generated) {
    generated = generateSplits(worldSeed);
    splits.set(worldSeed, generated);
  }
  return generated[split];
}

/** Its tasks are WebArena's format, with oracle plans. */
export const backend: EnvironmentBackend<typeof embeddedSettings, EmbeddedSettings & BackendSettings, WebArenaTask> = {
  name: 'embedded',
  settings: embeddedSettings,
  tasks: {
    key: (settings, split) => `embedded:${settings.worldSeed}:${split}`,
    load: async (settings, split) => embeddedSplit(settings.worldSeed, split),
  },
  scoring: () => ({ judge: new DeterministicJudge(), harness: 'webarena-lite', shopAdmin: EMBEDDED_SHOP_ADMIN_ACCOUNT }),
  async open(workers, services, settings, tasks) {
    const sites = await embeddedSitesOf(workers, settings.worldSeed);
    const { judge } = backend.scoring(settings, services);
    return { environment: new EmbeddedEnvironment({ siteUrls: sites.urls, tasks, judge }), siteUrls: sites.urls };
  },
  oracle: { demonstrable: withOraclePlans },
  evolve: (settings, request) => evolveTasks({ ...request, worldSeed: settings.worldSeed }),
  // The sites start inside each worker: nothing to reach before the campaign starts.
  check: async () => [],
  checkSubject: 'embedded sites',
};
