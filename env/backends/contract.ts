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
import type { EpisodeEnvironment, OracleStep } from '../../browser/contract';
import type { ArtifactStore } from '../../storage/artifactStore';
import type { EvaluatorOptions } from '../evaluators/harnesses/registry';
import type { FuzzyJudge } from '../evaluators/judge';
import type { SiteUrls } from '../siteUrls';

/**
 * The task every backend's source yields and every activity passes around (and stores as JSONL): what
 * the shared code reads of a task, in WebArena's field names (the first benchmark's), plus whatever the
 * backend keeps for itself (WebArena's `require_login`, a MiniWoB++ page's seed). How a task is scored
 * (`eval`) is its backend's own format: the shared code only asks whether it has one.
 */
export interface EnvironmentTask {
  task_id: number | string;
  /** What the agent is asked to do. */
  intent: string;
  /** Where the episode starts: a URL, or a placeholder the backend's site URLs resolve. */
  start_url: string;
  /** The sites (or the benchmark) the task runs on: the reports' per-site columns. */
  sites: readonly string[];
  /** Tasks of one template share it: the critic filter takes the most promising of each. */
  intent_template_id?: number;
  /** A plan that solves it (phase 0 demonstrates such tasks). */
  oracle?: OracleStep[];
  /** How its backend scores it, in the backend's format; absent: ungraded (the ORM's verdict is its reward). */
  eval?: unknown;
  /** The task the curriculum evolved it from, if it did. */
  evolved_from?: string | number;
  /** The backend's own fields. */
  [field: string]: unknown;
}

export type Split = 'train' | 'test';

/** What the curriculum asks a backend's own evolution for: new tasks from the ones the actor failed. */
export interface EvolveRequest<T extends EnvironmentTask = EnvironmentTask> {
  failed: readonly T[];
  /**
   * The tasks the actor solved in the rollouts `failed` comes from (the phase before), when known: an
   * evolution may weigh what the actor half-knows.
   */
  solved?: readonly T[];
  /** Intents that must not be generated again (train, test, earlier generated tasks). */
  knownIntents: ReadonlySet<string>;
  count: number;
  seed: number;
  /** Ids of the new tasks count up from here. */
  firstTaskId: number;
}

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
export interface TaskSource<S, T extends EnvironmentTask = EnvironmentTask> {
  /** Names a split's tasks for caching: the same key, the same tasks (a worker loads each once). */
  key(settings: S, split: Split): string;
  load(settings: S, split: Split, store?: ArtifactStore): Promise<T[]>;
  /** Whether loading the splits reads the campaign's store (for checks run before the store is needed). */
  readsStore?(settings: S): boolean;
}

/** What a browser worker lends a backend: a browser context, where it may serve sites, and per-worker state. */
export interface WorkerResources {
  openContext(): Promise<BrowserContext>;
  /** Where this worker serves sites of its own (`config.sites`: a host and a port per site), for a backend whose sites run in the worker. */
  readonly siteAddresses: { host: string; ports: Readonly<Record<string, number>> };
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

/** The tasks that carry an oracle plan (the ones phase 0 can demonstrate). */
export function withOraclePlans<T extends EnvironmentTask>(tasks: readonly T[]): T[] {
  return tasks.filter((task) => (task.oracle?.length ?? 0) > 0);
}

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

/**
 * An environment backend; `T` is its own task type (its tasks are what it loads, and what the campaign
 * hands back to it), the registry sees every backend's as `EnvironmentTask`.
 */
export interface EnvironmentBackend<
  Schema extends BackendSettingsSchema,
  S extends BackendSettings = z.output<Schema> & BackendSettings,
  T extends EnvironmentTask = EnvironmentTask,
> {
  /** The value of `campaign.environment.backend` that picks it. */
  readonly name: S['backend'];
  /** Its member of the `campaign.environment` union (the defaults of a config file that picks it). */
  readonly settings: Schema;
  /** Cross-field rules it adds to the whole config (checked when the config is parsed). */
  configIssues?(config: ConfigIssueInput, settings: S): ConfigIssue[];
  /** Environment variables that set its settings (variable -> config path), read when a config picks it. */
  readonly envOverrides?: Readonly<Record<string, string[]>>;
  /** Its train and test splits. */
  readonly tasks: TaskSource<S, T>;
  /** How its evaluators score (harness, judge, accounts). */
  scoring(settings: S, services: BackendServices): Scoring;
  /**
   * Opens episodes on the given tasks (the `EpisodeEnvironment` contract, browser/contract.ts). An
   * environment whose episodes end by themselves says so through `PreparedEpisode.ended`, and the episode
   * stops there (miniwob: the page's end of episode); embedded and webarena leave it unset, their episodes
   * ending at the agent's exit or the episode's limits, as WebArena's.
   */
  open(workers: WorkerResources, services: BackendServices, settings: S, tasks: readonly T[]): Promise<OpenedEnvironment>;
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
  readonly oracle?: { demonstrable(tasks: readonly T[]): T[] };
  /** The family a task id of its own belongs to (MiniWoB++'s task type), for the report's per-type curves; undefined for another's. */
  taskType?(taskId: string): string | undefined;
  /** The curriculum's own task evolution over its world, if it has one (else new tasks come from a chat generator). */
  evolve?(settings: S, request: EvolveRequest<T>): T[];
  /** The pre-start check (`webrl config check`, `campaign start`, `campaign run`): every problem, one line each. */
  check(settings: S, options: PreflightOptions): Promise<string[]>;
  /** What the pre-start check's error names (`campaign.environment (<subject>)`). */
  readonly checkSubject: string;
}
