/**
 * What a model backend is (verl's role -> worker mapping: the implementation of each role chosen once,
 * outside the loop). A backend is a folder under models/backends/ whose `settings.ts` holds its member
 * of each role's union in the config's `models` section (pure zod: the config loader reads it) and
 * whose `index.ts` builds the roles it fills; models/backends/registry.ts lists the backends, composes
 * the `models` schema from their settings and resolves a config's roles by asking them.
 */
import type { z } from 'zod';
import type { ObservationProfile } from '../../browser/pageRuntime';
import type { ModelSecrets } from '../../config/secrets';
import type { ArtifactStore, ObjectInfo } from '../../storage/artifactStore';
import type { Actor } from '../actor';
import type { Critic } from '../critic';
import type { Orm } from '../orm';
import type { ActorRole, ActorServing, ModelRoles } from './roles';

/** The roles of the config's `models` section, in the order the registry builds them (serving before the actor it serves, the actor before what reads its prompts). */
export const ROLE_NAMES = ['serving', 'actor', 'critic', 'orm', 'trainer', 'taskGenerator', 'feasibility', 'judge'] as const;
export type RoleName = (typeof ROLE_NAMES)[number];

/** A backend's settings for one role: a strict object whose `backend` is the backend's name. */
export type RoleSettingsSchema = z.ZodObject<{ backend: z.ZodLiteral<string> } & z.ZodRawShape>;

/** The campaign's store and this worker's copies of its objects (activities/campaign/context.ts provides them). */
export interface RoleStorage {
  readonly store: ArtifactStore;
  /** This worker's directory for cached objects or training work. */
  localRoot(kind: 'cache' | 'training'): string;
  /** A stored object (a checkpoint with its card, when asked) copied here once; its local path. */
  localFile(key: string, options?: { withCard?: boolean }): Promise<string>;
  /** Stores a trained model (a file or a directory) under `key`; what was uploaded. */
  uploadModel(localPath: string, key: string): Promise<ObjectInfo[]>;
}

/** The embedded checkpoints' ONNX sessions by storage key, one per checkpoint and worker. */
export interface EmbeddedModels {
  actor(key: string): Promise<Actor>;
  critic(key: string): Promise<Critic>;
  orm(key: string): Promise<Orm>;
}

/** The running activity's heartbeats (activities/heartbeats.ts): a role's long call reports its progress through them. */
export interface Heartbeats {
  /** Reports progress now; the timer's beats repeat it until the next report. */
  heartbeat(details: unknown): void;
  /** A beat now with the progress `withHeartbeats` reads (after it has changed). */
  beatNow(): void;
  /** While `work` runs, every beat reads its progress from `details`. */
  withHeartbeats<T>(details: () => unknown, work: Promise<T>): Promise<T>;
}

/** What every role's builder is given: the worker's campaign services and secrets, injected. */
export interface RoleDeps {
  storage: RoleStorage;
  models: EmbeddedModels;
  heartbeats: Heartbeats;
  secrets: ModelSecrets;
  env: NodeJS.ProcessEnv;
  /** The running activity's cancellation: a remote call stops when its activity is cancelled. */
  signal(): AbortSignal;
  /** Values kept for this worker under `key` (an ONNX session per critic file, say), created on first use. */
  shared<T>(key: string, create: () => T): T;
}

/** The roles built before a role that reads them: the serving of the actor, the actor of the critic and trainer. */
export interface BuiltRoles {
  serving?: ActorServing | undefined;
  actor?: ActorRole;
}

/** What each role's builder returns (the judge is built where WebArena's evaluator asks for it: env/evaluators/judge.ts). */
export type RoleTypes = ModelRoles & { judge: never };

export type RoleBuilder<R extends RoleName, S> = (settings: S, deps: RoleDeps, built: BuiltRoles) => RoleTypes[R];

/** What a pre-start check is given. */
export interface ModelCheckOptions {
  /** The campaign's store: sources in it are checked only with one. */
  store?: ArtifactStore;
  /** Whether this machine serves the model (stack.llm): its files are provisioned, and checked whole, when the main job starts. */
  servedHere: boolean;
}

/** A backend's check before a campaign starts (`webrl config check`, `campaign start`, the main job), of one role's settings. */
export interface ModelCheck<S> {
  /** Whether the check reads the campaign's store (a source named by a key). */
  readsStore(settings: S): boolean;
  /** Every problem, each naming its field; empty when the role may start. */
  problems(settings: S, options: ModelCheckOptions): Promise<string[]>;
}

/** Passes over the data per training job. */
export interface TrainingEpochs {
  sftEpochs: number;
  ormEpochs: number;
  criticEpochs: number;
  actorEpochs: number;
}

/** What a backend sets where a campaign leaves a setting unset (config/campaignConfig.ts); unset here: the embedded backend's. */
export interface BackendDefaults {
  /** As the trainer: its passes over the data per job (an external one trains LLMs: WebRL's). */
  epochs?: TrainingEpochs;
  /** As the actor: the pages it reads (the released WebRL checkpoints read the reference harness's). */
  observationProfile?: ObservationProfile;
}

/** A registered model backend: its name (the `backend` its settings carry), its settings per role and the roles it builds. */
export interface ModelBackend<S extends Partial<Record<RoleName, RoleSettingsSchema>> = Partial<Record<RoleName, RoleSettingsSchema>>> {
  name: string;
  settings: S;
  /** One builder per role in `settings` (the judge's settings alone are enough: its builder lives with the evaluator). */
  roles: { [R in keyof S & RoleName]?: RoleBuilder<R, z.output<NonNullable<S[R]>>> };
  /** The roles whose settings name files or checkpoints to check before a campaign starts. */
  checks?: { [R in keyof S & RoleName]?: ModelCheck<z.output<NonNullable<S[R]>>> };
  defaults?: BackendDefaults;
}
