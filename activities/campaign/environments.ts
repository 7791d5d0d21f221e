/**
 * The one place the browser activities get their environment from: `campaign.environment.backend`
 * picks the embedded sites (in this worker, an isolated state per episode) or WebArena's sites (real
 * ones or `webrl env serve`). Rollouts, demonstrations, the critic filter and evaluation see only the
 * `EpisodeEnvironment` contract and the site URLs.
 */
import { ApplicationFailure } from '@temporalio/activity';
import type { EpisodeEnvironment } from '../../browser/contract';
import type { Config } from '../../config/schema';
import { loadModelSecrets } from '../../config/secrets';
import { createJudge } from '../../env/evaluators/judge';
import { EmbeddedEnvironment } from '../../env/embedded';
import type { SiteUrls } from '../../env/site-urls';
import type { WebArenaTask } from '../../env/tasks/schema';
import { WebArenaEnvironment, type ResetMoment, type WebArenaSites } from '../../env/webarena/environment';
import type { BrowserRuntime } from './browserRuntime';

export interface CampaignEnvironment {
  environment: EpisodeEnvironment;
  /** What the tasks' placeholders resolve to. */
  siteUrls: SiteUrls;
  /** The WebArena sites behind it (absent for the embedded backend). */
  webarena?: WebArenaSites;
}

export async function campaignEnvironment(runtime: BrowserRuntime, config: Config, tasks: readonly WebArenaTask[]): Promise<CampaignEnvironment> {
  if (config.campaign.environment.backend === 'webarena') {
    const webarena = runtime.webArenaSites(config);
    // The shop helpers' admin account comes from the worker's environment (config/secrets.ts), as the judge's key.
    const scoring = { judge: createJudge(config.models.judge, loadModelSecrets()), harness: config.campaign.environment.webarena?.harness ?? 'webarena-lite' };
    return { environment: new WebArenaEnvironment(webarena, tasks, scoring), siteUrls: webarena.urls, webarena };
  }
  const sites = await runtime.embeddedSites(config.campaign.environment.worldSeed);
  return { environment: new EmbeddedEnvironment({ siteUrls: sites.urls, tasks }), siteUrls: sites.urls };
}

/** A site that stays down fails the activity for good: the phase waits for an operator, the site named. */
export function siteUnavailableFailure(message: string): ApplicationFailure {
  return ApplicationFailure.nonRetryable(`${message}; bring the site back, then retry the phase (webrl campaign retry-phase)`, 'SiteUnavailable');
}

/**
 * Before a phase (`phase`) and before its evaluation (`evaluation`): the resets the sites' policies
 * ask for at that moment, then a health check of every site. Nothing to do on the embedded backend.
 */
export async function prepareWebArena(runtime: BrowserRuntime, config: Config, moment: ResetMoment): Promise<{ reset: string[]; checked: string[] }> {
  if (config.campaign.environment.backend !== 'webarena') return { reset: [], checked: [] };
  const sites = runtime.webArenaSites(config);
  const down = await sites.unavailable();
  if (down.length) throw siteUnavailableFailure(down.map((site) => site.message).join('; '));
  const reset = await sites.resetAt(moment);
  // A reset may restart a site: it must answer again before episodes go there.
  const back = reset.length ? await sites.unavailable(reset) : [];
  if (back.length) throw siteUnavailableFailure(`after its reset, ${back.map((site) => site.message).join('; ')}`);
  return { reset, checked: sites.sites.map((site) => site.name) };
}
