/**
 * What an environment backend is (BrowserGym's shape: one small task contract, benchmarks that
 * register themselves; verl's: the implementation chosen once, outside the loop). Each backend is a
 * folder under env/backends/ whose index exports `settings` (its member of `campaign.environment`)
 * and `backend` (an `EnvironmentBackend`); env/backends/registry.ts lists them, and the activities,
 * the campaign control and the config loader ask the registry for the campaign's backend instead of
 * comparing backend names. docs/environments.md describes each part.
 */
import type { BrowserContext } from 'playwright-core';
import type { z } from 'zod';
import type { EpisodeEnvironment } from '../../browser/contract';
import type { ArtifactStore } from '../../storage/artifactStore';
import type { EmbeddedSites } from '../embeddedSites';
import type { EvaluatorOptions } from '../evaluators/harnesses/registry';
import type { FuzzyJudge } from '../evaluators/judge';
import type { SiteUrls } from '../siteUrls';
import type { EvolveRequest } from '../tasks/evolve';
import type { WebArenaTask } from '../tasks/schema';

/**
 * The task every backend's source yields and every activity passes around (and stores as JSONL):
 * WebArena's task format (intent, start_url with site placeholders, sites, eval, an optional oracle plan).
 */
export type EnvironmentTask = WebArenaTask;

export type Split = 'train' | 'test';

/** A backend's settings: its member of the `campaign.environment` union, told apart by `backend`. */
export interface BackendSettings {
  backend: string;
}

/** A backend's member of `campaign.environment`: a strict object whose `backend` is the backend's name. */
export type BackendSettingsSchema = z.ZodObject;

/** What a backend's cross-field rules read of the whole config (as parsed, before its defaults resolve). */
export interface ConfigIssueInput {
  campaign: { phase: { curriculum: boolean } };
  models: { judge?: { backend: string }; taskGenerator: { backend: string } };
}

/**
 * What the campaign lends a backend beside its own settings, made from the config by the caller: a
 * backend reads its settings and these, never the whole config.
 */
export interface BackendServices {
  /** The judge `models.judge` names (WebArena's fuzzy_match and ua_match); made when asked. */
  judge(): FuzzyJudge;
}

/** One cross-field problem a backend finds in a whole config (its path from the config's root). */
export interface ConfigIssue {
  path: (string | number)[];
  message: string;
}

/** Where the campaign's splits come from. */
export interface TaskSource<S> {
  /** Names a split's tasks for caching: the same key, the same tasks (a worker loads each once). */
  key(settings: S, split: Split): string;
  load(settings: S, split: Split, store?: ArtifactStore): Promise<EnvironmentTask[]>;
  /** Whether loading the splits reads the campaign's store (for checks run before the store is needed). */
  readsStore?(settings: S): boolean;
}

/** What a browser worker lends a backend: a browser context, the embedded sites, and per-worker state. */
export interface WorkerResources {
  openContext(): Promise<BrowserContext>;
  /** The embedded sites of `worldSeed`, started once per worker. */
  embeddedSites(worldSeed: number): Promise<EmbeddedSites>;
  /**
   * The value kept under `key` for this worker, created on first use (sessions, episode caps, counters,
   * a server): one with a `close()` (or a promise of one) is closed when the worker stops.
   */
  shared<T>(key: string, create: () => T): T;
}

/** An environment opened over a task set. */
export interface OpenedEnvironment {
  environment: EpisodeEnvironment;
  /** What the tasks' placeholders resolve to. */
  siteUrls: SiteUrls;
  /** After an episode's infrastructure failures: why its task's sites are down (empty if none is, or the backend cannot tell). */
  unavailable?(task: EnvironmentTask): Promise<string[]>;
}

/** When a backend prepares its sites: before a phase's episodes, or before its evaluation. */
export type PreparationMoment = 'phase' | 'evaluation';

/** What a preparation did: the sites reset, and the sites found healthy. */
export interface Preparation {
  reset: string[];
  checked: string[];
}

/** How a backend scores episodes: everything an evaluator needs but the site URLs. */
export type Scoring = Omit<EvaluatorOptions, 'siteUrls'>;

/** A preparation found sites down (the message names each): the phase waits for an operator. */
export class SitesUnavailable extends Error {
  override name = 'SitesUnavailable';
}

export interface PreflightOptions {
  store?: ArtifactStore;
  env?: NodeJS.ProcessEnv;
  /** Skip the sign-ins (no browser); the other checks still run. */
  skipLogin?: boolean;
  /** Phase 0 trains the embedded actor on oracle demonstrations: the train split must hold tasks with oracle plans. */
  demonstrationsNeedOraclePlans?: boolean;
}

export interface EnvironmentBackend<Schema extends BackendSettingsSchema, S extends BackendSettings = z.output<Schema> & BackendSettings> {
  /** The value of `campaign.environment.backend` that picks it. */
  readonly name: S['backend'];
  /** Its member of the `campaign.environment` union (the defaults of a config file that picks it). */
  readonly settings: Schema;
  /** Cross-field rules it adds to the whole config (checked when the config is parsed). */
  configIssues?(config: ConfigIssueInput, settings: S): ConfigIssue[];
  /** Environment variables that set its settings (variable -> config path), read when a config picks it. */
  readonly envOverrides?: Readonly<Record<string, string[]>>;
  /** Its train and test splits. */
  readonly tasks: TaskSource<S>;
  /** How its evaluators score (harness, judge, accounts). */
  scoring(settings: S, services: BackendServices): Scoring;
  /**
   * Opens episodes on the given tasks (the `EpisodeEnvironment` contract, browser/contract.ts). An
   * environment whose episodes end by themselves says so through `PreparedEpisode.ended`, and the episode
   * stops there (miniwob: the page's end of episode); embedded and webarena leave it unset, their episodes
   * ending at the agent's exit or the episode's limits, as WebArena's.
   */
  open(workers: WorkerResources, services: BackendServices, settings: S, tasks: readonly EnvironmentTask[]): Promise<OpenedEnvironment>;
  /**
   * Optional per-phase preparation (resets, health); `once` runs the resets at most once per phase and
   * moment. A backend that has one makes the workflow run it (the workflow input's `environmentChecks`).
   */
  prepare?(
    workers: WorkerResources,
    settings: S,
    moment: PreparationMoment,
    once: (resets: () => Promise<string[]>) => Promise<string[]>,
  ): Promise<Preparation>;
  /** Its oracle, if it has one: the tasks phase 0 can demonstrate (they carry oracle plans). */
  readonly oracle?: { demonstrable(tasks: readonly EnvironmentTask[]): EnvironmentTask[] };
  /** The family a task id of its own belongs to (MiniWoB++'s task type), for the report's per-type curves; undefined for another's. */
  taskType?(taskId: string): string | undefined;
  /** The curriculum's own task evolution over its world, if it has one (else new tasks come from a chat generator). */
  evolve?(settings: S, request: Omit<EvolveRequest, 'worldSeed'>): EnvironmentTask[];
  /** The pre-start check (`webrl config check`, `campaign start`, `campaign run`): every problem, one line each. */
  check(settings: S, options: PreflightOptions): Promise<string[]>;
  /** What the pre-start check's error names (`campaign.environment (<subject>)`). */
  readonly checkSubject: string;
}
