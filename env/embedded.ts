/**
 * The `EpisodeEnvironment` over the running embedded sites. Each episode gets a fresh id: every site
 * creates an empty copy-on-write state for it, and the browser context carries the id in a cookie,
 * so parallel episodes never see each other's changes and a reset costs a few milliseconds.
 */
import { randomUUID } from 'node:crypto';
import type { BrowserContext } from 'playwright-core';
import type { EpisodeEnvironment, EpisodeTask, PreparedEpisode } from '../browser/contract';
import { localEpisodeControl } from './http/siteServer';
import { DeterministicJudge, type FuzzyJudge } from './evaluators/judge';
import { EvaluatedTasks } from './evaluators/taskSet';
import { EMBEDDED_SHOP_ADMIN_ACCOUNT } from './sites/shopping/rest';
import { EPISODE_COOKIE } from './state/episodes';
import { EMBEDDED_SITE_NAMES, type SiteUrls } from './siteUrls';
import { startUrlOf } from './tasks/episodeTask';
import type { WebArenaTask } from './tasks/schema';

export { startUrlOf, toEpisodeTask } from './tasks/episodeTask';

export interface EmbeddedEnvironmentOptions {
  /** Where the embedded sites run (what `__SHOPPING__`, ... resolve to). */
  siteUrls: SiteUrls;
  /** The tasks episodes may be asked to run (matched by task_id). */
  tasks: readonly WebArenaTask[];
  /** Judge for fuzzy_match; default the deterministic one. */
  judge?: FuzzyJudge;
}

export class EmbeddedEnvironment implements EpisodeEnvironment {
  private readonly tasks: EvaluatedTasks;
  private readonly origins: string[];

  constructor(private readonly options: EmbeddedEnvironmentOptions) {
    const missing = EMBEDDED_SITE_NAMES.filter((site) => !options.siteUrls[site]);
    if (missing.length) throw new Error(`EmbeddedEnvironment needs the URLs of ${missing.join(', ')}`);
    this.origins = [...new Set(EMBEDDED_SITE_NAMES.map((site) => new URL(options.siteUrls[site] as string).origin))];
    this.tasks = new EvaluatedTasks(options.tasks, {
      siteUrls: options.siteUrls,
      judge: options.judge ?? new DeterministicJudge(),
      shopAdmin: EMBEDDED_SHOP_ADMIN_ACCOUNT,
    });
  }

  /** Creates or drops the episode's state on every site: directly in this process, else over HTTP. */
  private async control(method: 'PUT' | 'DELETE', episodeId: string): Promise<void> {
    await Promise.all(
      this.origins.map(async (origin) => {
        const local = localEpisodeControl(origin);
        if (local) {
          if (method === 'PUT') local.create(episodeId);
          else local.drop(episodeId);
          return;
        }
        const response = await fetch(`${origin}/__webrl/episodes/${episodeId}`, { method });
        if (!response.ok) throw new Error(`${method} episode ${episodeId} at ${origin}: HTTP ${response.status}`);
      }),
    );
  }

  async prepareEpisode(context: BrowserContext, episodeTask: EpisodeTask): Promise<PreparedEpisode> {
    const { task, evaluator } = this.tasks.require(episodeTask.task_id);
    const episodeId = randomUUID();
    await this.control('PUT', episodeId);
    await context.addCookies(this.origins.map((url) => ({ name: EPISODE_COOKIE, value: episodeId, url })));
    let disposed = false;
    return {
      startUrl: startUrlOf(task, this.options.siteUrls),
      evaluate: (page, answer) => evaluator.evaluate(page, answer),
      dispose: async () => {
        if (disposed) return;
        disposed = true;
        await this.control('DELETE', episodeId);
      },
    };
  }
}
