/** Each phase's trained actor deployed by the user's command (activities/campaign/deployActivities.ts). */
import type { ModelBackend } from '../contract';
import { commandServing } from './serving';
import { settings } from './settings';

export const backend: ModelBackend<typeof settings> = {
  name: 'command',
  settings,
  roles: { serving: (serving, { storage, secrets, heartbeats }) => commandServing(storage, serving, secrets, heartbeats) },
};
