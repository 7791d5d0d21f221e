/** Each phase's trained actor deployed by the user's command (activities/campaign/deployActivities.ts). */
import { commandServing } from '../../../activities/campaign/deployActivities';
import type { ModelBackend } from '../contract';
import { settings } from './settings';

export const backend: ModelBackend<typeof settings> = {
  name: 'command',
  settings,
  roles: { serving: (serving, { ctx, secrets }) => commandServing(ctx, serving, secrets) },
};
