/**
 * The `EpisodeEnvironment` over WebArena's sites (real ones, or the embedded ones `webrl env serve`
 * deploys): every episode gets the signed-in storage state of its task's sites, waits for a free slot
 * under each site's episode cap (a real site is shared state), and triggers the sites' `everyNEpisodes`
 * resets. One `WebArenaSites` per worker holds the sessions, caps and counters; environments over
 * task sets share it.
 */
import type { BrowserContext } from 'playwright-core';
import type { EpisodeEnvironment, EpisodeTask, PreparedEpisode } from '../../browser/contract';
import type { WebArenaConfig } from '../backends/webarena/settings';
import { startUrlOf } from '../tasks/episodeTask';
import { DeterministicJudge, type FuzzyJudge } from '../evaluators/judge';
import { EvaluatedTasks } from '../evaluators/taskSet';
import type { HarnessName } from '../evaluators/harnesses/names';
import type { SiteUrls } from '../siteUrls';
import type { WebArenaTask } from '../tasks/schema';
import { showsLoginForm, SiteSessions } from './sessions';
import { runResetHook, siteUrlsOf, unavailableSites, webArenaSites, type SiteUnavailable, type WebArenaSite } from './sites';

/** A counting semaphore whose holders take one slot, or all of them (a reset: nobody else on the site). */
class SiteGate {
  private readonly waiting: { weight: number; wake: () => void }[] = [];
  private free: number;

  constructor(private readonly size: number) {
    this.free = size;
  }

  async acquire(exclusive = false): Promise<() => void> {
    const weight = exclusive ? this.size : 1;
    if (this.waiting.length === 0 && this.free >= weight) this.free -= weight;
    else await new Promise<void>((wake) => this.waiting.push({ weight, wake }));
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.free += weight;
      this.drain();
    };
  }

  private drain(): void {
    while (this.waiting.length > 0 && this.free >= this.waiting[0]!.weight) {
      const next = this.waiting.shift()!;
      this.free -= next.weight;
      next.wake();
    }
  }
}

export type ResetMoment = 'phase' | 'evaluation';

/** The sites of one `webarena` configuration as this worker uses them. */
export class WebArenaSites {
  readonly sites: WebArenaSite[];
  readonly urls: SiteUrls;
  readonly sessions: SiteSessions;
  private readonly gates = new Map<string, SiteGate>();
  private readonly episodesSinceReset = new Map<string, number>();
  private readonly resetting = new Map<string, Promise<number>>();
  /** Resets done by this worker, per site, with their durations in ms. */
  readonly resets = new Map<string, number[]>();

  constructor(
    readonly config: WebArenaConfig,
    openContext: () => Promise<BrowserContext>,
    env: NodeJS.ProcessEnv = process.env,
  ) {
    this.sites = webArenaSites(config);
    this.urls = siteUrlsOf(this.sites);
    this.sessions = new SiteSessions(openContext, env, config.sessionCheckSeconds * 1000);
    for (const site of this.sites) this.gates.set(site.name, new SiteGate(site.maxConcurrentEpisodes));
  }

  site(name: string): WebArenaSite {
    const site = this.sites.find((s) => s.name === name);
    if (!site) throw new Error(`site ${name} has no URL (campaign.environment.webarena.sites.${name}.url or ${name.toUpperCase()})`);
    return site;
  }

  /** Resets one site while no episode of this worker runs on it; its session is signed in again afterwards. */
  async reset(site: WebArenaSite): Promise<number> {
    const release = await this.gates.get(site.name)!.acquire(true);
    try {
      const ms = await runResetHook(site);
      this.sessions.invalidate(site.name);
      this.episodesSinceReset.set(site.name, 0);
      this.resets.set(site.name, [...(this.resets.get(site.name) ?? []), ms]);
      return ms;
    } finally {
      release();
    }
  }

  /** The resets due at a moment of the phase (`oncePerPhase` at its start, `beforeEvaluation` before its evaluation). */
  async resetAt(moment: ResetMoment): Promise<string[]> {
    const policy = moment === 'phase' ? 'oncePerPhase' : 'beforeEvaluation';
    const due = this.sites.filter((site) => site.reset?.policy === policy);
    await Promise.all(due.map((site) => this.reset(site)));
    return due.map((site) => site.name);
  }

  /** Every site that does not answer within the health check's tries. */
  unavailable(names?: readonly string[]): Promise<SiteUnavailable[]> {
    const sites = names ? this.sites.filter((site) => names.includes(site.name)) : this.sites;
    const checked: { name: string; url: string }[] = [...sites];
    if (!names && this.config.homepage) checked.push({ name: 'homepage', url: this.config.homepage });
    return unavailableSites(checked, this.config.healthCheck);
  }

  /**
   * Enters an episode on `names`: a reset first where `everyNEpisodes` says one is due, then a slot on
   * each site (in name order, so two multi-site episodes never wait on each other). Returns the release.
   */
  async enter(names: readonly string[]): Promise<() => void> {
    const sites = [...new Set(names)].sort().map((name) => this.site(name));
    const releases: (() => void)[] = [];
    try {
      for (const site of sites) {
        const policy = site.reset?.policy;
        for (;;) {
          // Decided while holding a slot, so episodes queued together do not all skip (or all run) the reset.
          const release = await this.gates.get(site.name)!.acquire();
          const count = this.episodesSinceReset.get(site.name) ?? 0;
          if (!(policy && typeof policy === 'object' && count >= policy.everyNEpisodes)) {
            this.episodesSinceReset.set(site.name, count + 1);
            releases.push(release);
            break;
          }
          release();
          let resetting = this.resetting.get(site.name);
          if (!resetting) {
            resetting = this.reset(site).finally(() => this.resetting.delete(site.name));
            this.resetting.set(site.name, resetting);
          }
          await resetting;
        }
      }
    } catch (error) {
      for (const release of releases) release();
      throw error;
    }
    return () => releases.forEach((release) => release());
  }
}

export class SessionExpired extends Error {
  override name = 'SessionExpired';
}

export class WebArenaEnvironment implements EpisodeEnvironment {
  private readonly tasks: EvaluatedTasks;

  constructor(
    private readonly sites: WebArenaSites,
    tasks: readonly WebArenaTask[],
    scoring: { judge?: FuzzyJudge; harness?: HarnessName } = {},
  ) {
    this.tasks = new EvaluatedTasks(tasks, {
      siteUrls: sites.urls,
      judge: scoring.judge ?? new DeterministicJudge(),
      ...(scoring.harness ? { harness: scoring.harness } : {}),
    });
  }

  async prepareEpisode(context: BrowserContext, episodeTask: EpisodeTask): Promise<PreparedEpisode> {
    const { task, evaluator } = this.tasks.require(episodeTask.task_id);
    const sites = task.sites.map((name) => this.sites.site(name));
    for (const site of sites) {
      const state = await this.sites.sessions.validState(site);
      if (state?.cookies.length) await context.addCookies(state.cookies);
    }
    // A harness that scores more than the final page (WebArena-Verified: the requests) records it from the episode's first request.
    const recording = this.tasks.harness.recordEpisode?.(context);
    return {
      startUrl: startUrlOf(task, this.sites.urls),
      evaluate: async (page, answer) => {
        // A page that shows a sign-in form means the session ended under the episode: sign in again and rerun it.
        for (const site of sites) {
          if (await showsLoginForm(page, site)) {
            this.sites.sessions.invalidate(site.name);
            throw new SessionExpired(`the session on site ${site.name} ended during the episode (its sign-in form is shown); signing in again`);
          }
        }
        if (!recording) return evaluator.evaluate(page, answer);
        const { evidence, files } = await recording.stop();
        const scored = await evaluator.evaluate(page, answer, evidence);
        return { ...(typeof scored === 'number' ? { score: scored, details: {} } : scored), files };
      },
      dispose: async () => {},
    };
  }

  async reserve(episodeTask: EpisodeTask): Promise<() => void> {
    const task = this.tasks.get(episodeTask.task_id);
    return this.sites.enter(task?.sites ?? []);
  }
}
