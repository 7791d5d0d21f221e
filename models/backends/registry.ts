/**
 * Every model backend, and the one place a config's roles are resolved. The config's `models` section
 * is composed here from the backends' settings (one union per role, told apart by `backend`), checked
 * by the rules between roles (rules.ts), and `resolveRoles` builds each role by asking the backend its
 * settings name. Adding a backend: its folder under models/backends/ (settings.ts and index.ts, see
 * contract.ts) and its line in MODEL_BACKENDS; a test registers one with `registerModelBackend`.
 */
import { z } from 'zod';
import type { ModelRoles } from './roles';
import { backend as chat } from './chat';
import { backend as command } from './command';
import { backend as completions } from './completions';
import { ConfigError } from '../../config/errors';
import type { ArtifactStore } from '../../storage/artifactStore';
import {
  ROLE_NAMES,
  type BackendDefaults,
  type BuiltRoles,
  type ModelBackend,
  type ModelCheck,
  type RoleDeps,
  type RoleName,
  type RoleSettingsSchema,
  type RoleTypes,
} from './contract';
import { backend as embedded } from './embedded';
import { backend as external } from './external';
import { backend as http } from './http';
import { backend as none } from './none';
import { backend as onnxFile } from './onnx-file';
import { MODEL_RULES } from './rules';
import { backend as served } from './served';
import { backend as vllmLora } from './vllm-lora';

/** The registered backends; each role's union lists the backends filling it in this order. */
const MODEL_BACKENDS = [embedded, none, completions, chat, onnxFile, http, served, external, vllmLora, command] as const;

type BuiltIn = (typeof MODEL_BACKENDS)[number];
type SchemaOf<B, R extends RoleName> = B extends { settings: infer S } ? (R extends keyof S ? S[R] : never) : never;
/** A role's settings: the union of the registered backends' members. */
export type RoleSettings<R extends RoleName> = z.output<SchemaOf<BuiltIn, R>>;
type RoleInput<R extends RoleName> = z.input<SchemaOf<BuiltIn, R>>;

/** Backends registered at run time (a test's), after the built-in ones. */
const registered: ModelBackend[] = [...MODEL_BACKENDS];
/** Set once a role's union is built (the first config read): a backend registered later could not be named by a config. */
let composed = false;

/** Adds a backend (a test's toy one); before the first config is read, so that configs may name it. */
export function registerModelBackend(backend: ModelBackend): void {
  if (composed) throw new Error(`model backend '${backend.name}' is registered after the first config was read: register it before`);
  if (registered.some((known) => known.name === backend.name)) throw new Error(`a model backend is already registered as '${backend.name}'`);
  registered.push(backend);
}

function backendsFilling(role: RoleName): ModelBackend[] {
  return registered.filter((backend) => backend.settings[role] !== undefined);
}

/** `models.<role>`: the union of the registered backends' settings for it, composed when first read. */
function roleSchema<R extends RoleName>(role: R): z.ZodType<RoleSettings<R>, RoleInput<R>> {
  return z.lazy(() => {
    composed = true;
    const members = backendsFilling(role).map((backend) => backend.settings[role]!);
    return z.discriminatedUnion('backend', members as [RoleSettingsSchema, ...RoleSettingsSchema[]]);
  }) as unknown as z.ZodType<RoleSettings<R>, RoleInput<R>>;
}

/**
 * Which backend each model role uses. Everything defaults to the embedded ONNX models and task
 * evolution, so a config without this section behaves as before.
 */
export const ModelsSchema = z
  .strictObject({
    actor: roleSchema('actor').default({ backend: 'embedded' }),
    orm: roleSchema('orm').default({ backend: 'embedded' }),
    critic: roleSchema('critic').default({ backend: 'embedded' }),
    taskGenerator: roleSchema('taskGenerator').default({ backend: 'embedded' }),
    feasibility: roleSchema('feasibility').default({ backend: 'none' }),
    /**
     * The judge of WebArena's fuzzy_match and ua_match (`webrl tasks validate -c`): absent or
     * `embedded`, the deterministic judge of the embedded sites; `chat`, an LLM, as WebArena grades.
     */
    judge: roleSchema('judge').optional(),
    trainer: roleSchema('trainer').default({ backend: 'embedded' }),
    /**
     * How each phase's trained actor reaches the server that rolls it out: `none` (the configured
     * model serves every phase), vLLM's runtime LoRA API, or a user command that (re)deploys it.
     */
    serving: roleSchema('serving').default({ backend: 'none' }),
  })
  .superRefine((models, ctx) => {
    for (const rule of MODEL_RULES) for (const issue of rule(models)) ctx.addIssue({ code: 'custom', ...issue });
  });

export type ModelsConfig = z.output<typeof ModelsSchema>;

/** The backend registered under `name` for `role` (a config's `models.<role>.backend`). */
function backendFor(role: RoleName, name: string): ModelBackend {
  const backend = backendsFilling(role).find((known) => known.name === name);
  if (!backend) throw new Error(`no model backend is registered as '${name}' for models.${role}`);
  return backend;
}

function build<R extends Exclude<RoleName, 'judge'>>(role: R, settings: { backend: string }, deps: RoleDeps, built: BuiltRoles): RoleTypes[R] {
  const builder = backendFor(role, settings.backend).roles[role] as ((settings: unknown, deps: RoleDeps, built: BuiltRoles) => RoleTypes[R]) | undefined;
  if (!builder) throw new Error(`model backend '${settings.backend}' has settings for models.${role} but does not build it`);
  return builder(settings, deps, built);
}

/** A config's roles, each built by its backend, in ROLE_NAMES's order (the serving first: the actor asks it for names). */
export function resolveRoles(models: { [R in Exclude<RoleName, 'judge'>]: { backend: string } }, deps: RoleDeps): ModelRoles {
  const serving = build('serving', models.serving, deps, {});
  const actor = build('actor', models.actor, deps, { serving });
  const built = { serving, actor };
  return {
    actor,
    critic: build('critic', models.critic, deps, built),
    orm: build('orm', models.orm, deps, built),
    trainer: build('trainer', models.trainer, deps, built),
    taskGenerator: build('taskGenerator', models.taskGenerator, deps, built),
    feasibility: build('feasibility', models.feasibility, deps, built),
    serving,
  };
}

/** A `models` section as the checks read it: each role's settings (the judge's may be absent). */
type ModelsToCheck = { [R in RoleName]?: { backend: string } | undefined };

/** The checks of the roles whose backends have one, in ROLE_NAMES's order, with their settings. */
function checksOf(models: ModelsToCheck): { check: ModelCheck<{ backend: string }>; settings: { backend: string } }[] {
  return ROLE_NAMES.flatMap((role) => {
    const settings = models[role];
    const check = settings && (backendFor(role, settings.backend).checks?.[role] as ModelCheck<{ backend: string }> | undefined);
    return settings && check ? [{ check, settings }] : [];
  });
}

/** Whether a check before the start reads the campaign's store (an SFT data file or a checkpoint named by a key). */
export function modelsReadStore(models: ModelsToCheck): boolean {
  return checksOf(models).some(({ check, settings }) => check.readsStore(settings));
}

/**
 * Before a campaign starts (`webrl config check`, `campaign start`, the main job): every problem the
 * backends find in their roles' settings (a completions actor's SFT data file and init checkpoint),
 * thrown together as one ConfigError naming `source`.
 */
export async function assertModelsReady(config: { models: ModelsToCheck; stack: { llm?: unknown } }, source: string, store?: ArtifactStore): Promise<void> {
  const problems: string[] = [];
  for (const { check, settings } of checksOf(config.models)) {
    // One by one: a huge bad file has more problems than a spread's arguments may number.
    for (const problem of await check.problems(settings, { ...(store ? { store } : {}), servedHere: config.stack.llm !== undefined })) problems.push(problem);
  }
  if (problems.length) throw new ConfigError(source, problems);
}

/** What the backends of a config's trainer and actor set where the campaign leaves epochs and the observation profile unset. */
export function backendDefaults(models: { actor: { backend: string }; trainer: { backend: string } }): BackendDefaults {
  const epochs = backendFor('trainer', models.trainer.backend).defaults?.epochs;
  const observationProfile = backendFor('actor', models.actor.backend).defaults?.observationProfile;
  return { ...(epochs ? { epochs } : {}), ...(observationProfile ? { observationProfile } : {}) };
}
