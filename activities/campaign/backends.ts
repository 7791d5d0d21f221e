/**
 * The worker's side of the model registry (models/backends/registry.ts): each campaign config that
 * reaches this worker gets its roles resolved once per distinct `models` section, and the activity
 * factories receive them as interfaces (models/backends/roles.ts). Keys come from the worker's
 * secrets (config/secrets.ts), never from the config, so they never reach S3 or histories.
 */
import { Context } from '@temporalio/activity';
import type { ModelSecrets } from '../../config/secrets';
import type { RoleDeps } from '../../models/backends/contract';
import { resolveRoles } from '../../models/backends/registry';
import type { Config } from '../../config/campaignConfig';
import type { ModelRoles } from '../../models/backends/roles';
import { beatNow, heartbeat, withHeartbeats } from '../heartbeats';
import type { CampaignContext } from './context';
import type { ModelCache } from './models';

/**
 * The roles for a campaign's frozen config. A worker serves every campaign that reaches its queues,
 * each with its own config; the worker resolves a config's roles once and reuses them.
 */
export type RolesFor = (config: Config) => ModelRoles;

/**
 * Resolves the roles of each campaign config that reaches this worker, once per distinct `models`
 * section: one worker serves every campaign on its queues, each under its own frozen config.
 */
export function createRoleResolver(deps: { ctx: CampaignContext; models: ModelCache; secrets: ModelSecrets; env?: NodeJS.ProcessEnv }): RolesFor {
  const resolved = new Map<string, ModelRoles>();
  const sharedValues = new Map<string, unknown>();
  const roleDeps: RoleDeps = {
    storage: deps.ctx,
    models: deps.models,
    heartbeats: { heartbeat, beatNow, withHeartbeats },
    secrets: deps.secrets,
    env: deps.env ?? process.env,
    signal: () => Context.current().cancellationSignal,
    shared<T>(key: string, create: () => T): T {
      if (!sharedValues.has(key)) sharedValues.set(key, create());
      return sharedValues.get(key) as T;
    },
  };
  return (config) => {
    const key = JSON.stringify(config.models);
    let roles = resolved.get(key);
    if (!roles) {
      roles = resolveRoles(config.models, roleDeps);
      resolved.set(key, roles);
    }
    return roles;
  };
}
