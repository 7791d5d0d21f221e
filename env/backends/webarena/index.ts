/**
 * The webarena backend: WebArena's sites running elsewhere (real ones, or the embedded ones `webrl
 * env serve` deploys), task files in WebArena's format, signed-in sessions and episode caps per site,
 * the sites' resets and health before each phase, and either harness's evaluators.
 */
import { WebArenaEnvironment, WebArenaSites } from '../../webarena/environment';
import { loadTaskSource, sitesAndTasksProblems } from '../../webarena/preflight';
import { EnvCtrlResetFailed } from '../../webarena/sites';
import { type BackendSettings, type EnvironmentBackend, SitesUnavailable, withOraclePlans, type WorkerResources } from '../contract';
import type { WebArenaTask } from '../../tasks/schema';
import { WEBARENA_URL_OVERRIDES, webarenaConfigIssues, webarenaSettings, type WebArenaSettings } from './settings';

/** Its member of `campaign.environment`. */
export { webarenaSettings as settings };

/** The sites of one `webarena` section, one set (sessions, episode caps, counters) per worker. */
function sitesOf(workers: WorkerResources, settings: WebArenaSettings): WebArenaSites {
  return workers.shared(`webarena:${JSON.stringify(settings.webarena)}`, () => new WebArenaSites(settings.webarena, () => workers.openContext()));
}

const messages = (down: readonly { message: string }[]) => down.map((site) => site.message).join('; ');

/** Its tasks are WebArena's format (task files, validated when loaded). */
export const backend: EnvironmentBackend<typeof webarenaSettings, WebArenaSettings & BackendSettings, WebArenaTask> = {
  name: 'webarena',
  settings: webarenaSettings,
  configIssues: webarenaConfigIssues,
  envOverrides: WEBARENA_URL_OVERRIDES,
  tasks: {
    key: (settings, split) => `webarena:${JSON.stringify(settings.webarena.tasks[split])}`,
    load: (settings, split, store) => loadTaskSource(settings.webarena.tasks[split], store),
    readsStore: (settings) => Object.values(settings.webarena.tasks).some((source) => 'key' in source),
  },
  // The shop helpers' admin account comes from the worker's environment (config/secrets.ts), as the judge's key.
  scoring: (settings, services) => ({ judge: services.judge(), harness: settings.webarena.harness }),
  async open(workers, services, settings, tasks) {
    const sites = sitesOf(workers, settings);
    return {
      environment: new WebArenaEnvironment(sites, tasks, backend.scoring(settings, services)),
      siteUrls: sites.urls,
      unavailable: async (task) => (await sites.unavailable(task.sites)).map((site) => site.message),
    };
  },
  /**
   * The resets the sites' policies ask for at `moment`, then a health check of every site; the
   * resets run at most once per phase and moment (`once`), the health check every time.
   */
  async prepare(workers, settings, moment, once) {
    const sites = sitesOf(workers, settings);
    const down = await sites.unavailable();
    if (down.length) throw new SitesUnavailable(messages(down));
    const reset = await once(() => sites.resetAt(moment)).catch((error: unknown) => {
      // A site that env-ctrl cannot restart needs an operator, as a site that is down does.
      throw error instanceof EnvCtrlResetFailed ? new SitesUnavailable(error.message) : error;
    });
    // A reset may restart a site: it must answer again before episodes go there.
    const back = reset.length ? await sites.unavailable(reset) : [];
    if (back.length) throw new SitesUnavailable(`after its reset, ${messages(back)}`);
    return { reset, checked: sites.sites.map((site) => site.name) };
  },
  // Tasks exported by `webrl env export` carry oracle plans; WebArena's own do not.
  oracle: { demonstrable: withOraclePlans },
  check: (settings, options) => sitesAndTasksProblems(settings.webarena, options),
  checkSubject: 'webarena sites and tasks',
};
