/**
 * Every environment backend. `campaign.environment` is the union of their settings on `backend`
 * (config/campaignConfig.ts), and the activities, the campaign control and the config loader reach
 * the campaign's backend through `backendOf` (or `backendNamed`) only. Adding a backend: its folder
 * under env/backends/ and its line in BUILT_IN; a test registers one with `registerEnvironmentBackend`.
 */
import { z } from 'zod';
import { ConfigError } from '../../config/errors';
import type { BackendSettings, BackendSettingsSchema, EnvironmentBackend, EnvironmentTask, PreflightOptions } from './contract';
import * as embedded from './embedded';
import * as miniwob from './miniwob';
import * as webarena from './webarena';

/** The built-in backends; the first is the default (a config that names none). */
const BUILT_IN = [embedded.backend, webarena.backend, miniwob.backend] as const;

/** The built-in members of `campaign.environment`: the config's type (a registered backend's settings parse as well). */
type BuiltInSettings = (typeof BUILT_IN)[number]['settings'];
export type EnvironmentSettings = z.output<BuiltInSettings>;
export type BackendName = EnvironmentSettings['backend'];

/** A registered backend, its settings and task types widened to the union's (each backend narrows to its own). */
export type RegisteredBackend = EnvironmentBackend<BackendSettingsSchema, EnvironmentSettings>;

/** The registered backends: the built-in ones, then those registered at run time (a test's). */
const registered: RegisteredBackend[] = [...BUILT_IN];
/** Set once the union is composed (the first config read): a backend registered later could not be named by a config. */
let composed: z.ZodType | undefined;

/** Adds a backend (a test's toy one), before the first config is read, so that configs may name it. */
export function registerEnvironmentBackend<Schema extends BackendSettingsSchema, S extends BackendSettings, T extends EnvironmentTask>(
  backend: EnvironmentBackend<Schema, S, T>,
): void {
  if (composed) throw new Error(`environment backend '${backend.name}' is registered after the first config was read: register it before`);
  if (registered.some((known) => known.name === backend.name)) throw new Error(`an environment backend is already registered as '${backend.name}'`);
  registered.push(backend as unknown as RegisteredBackend);
}

/**
 * `campaign.environment`: one member per registered backend, told apart by `backend`, composed when
 * first read. Each backend's folder exports `settings` (its member) and `backend` (the rest of the contract).
 */
export const environmentSettings = z.lazy(() => {
  composed ??= z.discriminatedUnion('backend', registered.map((backend) => backend.settings) as [BackendSettingsSchema, ...BackendSettingsSchema[]], {
    error: (issue: { code?: string }): string | undefined =>
      issue.code === 'invalid_union' ? `Invalid option: expected one of ${backendNames().join('|')}` : undefined,
  });
  return composed;
}) as unknown as z.ZodType<EnvironmentSettings, z.input<BuiltInSettings>>;

/** The registered backends, in the union's order. */
export function environmentBackends(): readonly RegisteredBackend[] {
  return registered;
}

function backendNames(): string[] {
  return registered.map((backend) => `"${backend.name}"`);
}

/** The backend registered under `name` (a config's `campaign.environment.backend`). */
export function backendNamed(name: BackendName): RegisteredBackend {
  const backend = findBackend(name);
  if (!backend) throw new Error(`no environment backend is registered as '${name}' (registered: ${registered.map((b) => b.name).join(', ')})`);
  return backend;
}

/** The backend a raw config's `backend` names, if one is registered under it (the default when it names none). */
export function findBackend(name: unknown): RegisteredBackend | undefined {
  if (name === undefined) return registered[0];
  return registered.find((backend) => backend.name === name);
}

/** The task type a registered backend gives a task id (MiniWoB++'s `miniwob:<type>:<seed>`), if one does. */
export function taskTypeOf(taskId: string): string | undefined {
  for (const backend of registered) {
    const type = backend.taskType?.(taskId);
    if (type !== undefined) return type;
  }
  return undefined;
}

/** The registered backend whose settings have `field` (a section of its own, such as `webarena`), if any. */
export function backendWithField(field: string): RegisteredBackend | undefined {
  return registered.find((backend) => field in backend.settings.shape);
}

/** What the registry reads of a config: the campaign's environment (and, for the pre-start check, the actor's backend). */
export interface EnvironmentChoice {
  campaign: { environment: EnvironmentSettings };
}

/** The campaign's backend with its settings. */
export function backendOf(config: EnvironmentChoice): { backend: RegisteredBackend; settings: EnvironmentSettings } {
  const settings = config.campaign.environment;
  return { backend: backendNamed(settings.backend), settings };
}

/** The pre-start check of the campaign's backend: one `ConfigError` listing every problem. */
export async function assertEnvironmentReady(
  config: EnvironmentChoice & { models: { actor: { backend: string } } },
  options: PreflightOptions = {},
): Promise<void> {
  const { backend, settings } = backendOf(config);
  const problems = await backend.check(settings, { ...options, demonstrationsNeedOraclePlans: config.models.actor.backend === 'embedded' });
  if (problems.length) throw new ConfigError(`campaign.environment (${backend.checkSubject})`, problems);
}
