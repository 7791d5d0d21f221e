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
import type { ArtifactStore } from '../../storage/artifactStore';
import type { CampaignContext } from '../../activities/campaign/context';
import type { ModelCache } from '../../activities/campaign/models';
import type { ActorRole, ActorServing, ModelRoles } from '../../activities/campaign/roles';

/** The roles of the config's `models` section, in the order the registry builds them (serving before the actor it serves, the actor before what reads its prompts). */
export const ROLE_NAMES = ['serving', 'actor', 'critic', 'orm', 'trainer', 'taskGenerator', 'feasibility', 'judge'] as const;
export type RoleName = (typeof ROLE_NAMES)[number];

/** A backend's settings for one role: a strict object whose `backend` is the backend's name. */
export type RoleSettingsSchema = z.ZodObject<{ backend: z.ZodLiteral<string> } & z.ZodRawShape>;

/** What every role's builder is given: the worker's campaign services and secrets, injected. */
export interface RoleDeps {
  ctx: CampaignContext;
  /** The embedded checkpoints' ONNX sessions, one per checkpoint and worker. */
  models: ModelCache;
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
