/**
 * Every environment backend. `campaign.environment` is the union of their settings on `backend`
 * (config/campaignConfig.ts), and the activities, the campaign control and the config loader reach
 * the campaign's backend through `backendOf` (or `backendNamed`) only. Adding a backend: its folder
 * under env/backends/, its import here and its entries in `environmentSettings` and `BACKENDS`.
 */
import { z } from 'zod';
import { ConfigError } from '../../config/errors';
import type { BackendSettingsSchema, EnvironmentBackend, PreflightOptions } from './contract';
import * as embedded from './embedded';
import * as miniwob from './miniwob';
import * as webarena from './webarena';

/**
 * `campaign.environment`: one member per registered backend, told apart by `backend`; the first is the
 * default (a config that names none). Each backend's folder exports `settings` (this schema) and
 * `backend` (the rest of the contract); a backend is registered by its import above and its entry here
 * and in BACKENDS. (The schemas are listed apart from the backends so that the config's type keeps
 * each member's own type; BACKENDS widens them to the union.)
 */
export const environmentSettings = z.discriminatedUnion('backend', [embedded.settings, webarena.settings, miniwob.settings], {
  error: (issue: { code?: string }): string | undefined =>
    issue.code === 'invalid_union' ? `Invalid option: expected one of ${backendNames().join('|')}` : undefined,
});
export type EnvironmentSettings = z.output<typeof environmentSettings>;
export type BackendName = EnvironmentSettings['backend'];

/** A registered backend, its settings type widened to the union (each backend narrows to its own). */
export type RegisteredBackend = EnvironmentBackend<BackendSettingsSchema, EnvironmentSettings>;

/** The registered backends, in the union's order. */
export const BACKENDS: readonly RegisteredBackend[] = [embedded.backend, webarena.backend, miniwob.backend];

function backendNames(): string[] {
  return BACKENDS.map((backend) => `"${backend.name}"`);
}

/** The backend registered under `name` (a config's `campaign.environment.backend`). */
export function backendNamed(name: BackendName): RegisteredBackend {
  const backend = findBackend(name);
  if (!backend) throw new Error(`no environment backend is registered as '${name}' (registered: ${BACKENDS.map((b) => b.name).join(', ')})`);
  return backend;
}

/** The backend a raw config's `backend` names, if one is registered under it (the default when it names none). */
export function findBackend(name: unknown): RegisteredBackend | undefined {
  if (name === undefined) return BACKENDS[0];
  return BACKENDS.find((backend) => backend.name === name);
}

/** The task type a registered backend gives a task id (MiniWoB++'s `miniwob:<type>:<seed>`), if one does. */
export function taskTypeOf(taskId: string): string | undefined {
  for (const backend of BACKENDS) {
    const type = backend.taskType?.(taskId);
    if (type !== undefined) return type;
  }
  return undefined;
}

/** The registered backend whose settings have `field` (a section of its own, such as `webarena`), if any. */
export function backendWithField(field: string): RegisteredBackend | undefined {
  return BACKENDS.find((backend) => field in backend.settings.shape);
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
