/** The model roles a worker would resolve (activities/campaign/backends.ts), for tests that compose activities themselves. */
import { createRoleResolver } from '../../activities/campaign/backends';
import type { CampaignContext } from '../../activities/campaign/context';
import { ModelCache } from '../../activities/campaign/models';
import type { RolesFor } from '../../activities/campaign/backends';
import { loadModelSecrets } from '../../config/secrets';

export function workerRoles(ctx: CampaignContext, models: ModelCache = new ModelCache(ctx)): RolesFor {
  return createRoleResolver({ ctx, models, secrets: loadModelSecrets() });
}
