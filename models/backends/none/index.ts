/** No model in the role: no critic filter, no feasibility check, no serving of trained actors. */
import type { ModelBackend } from '../contract';
import { settings } from './settings';

export const backend: ModelBackend<typeof settings> = {
  name: 'none',
  settings,
  roles: {
    // filterTasksByCritic keeps the candidates without asking a critic.
    critic: () => ({
      valuesTasks: false,
      trainedByCampaign: false,
      values: () => Promise.reject(new Error('models.critic.backend is none: no critic values states')),
    }),
    feasibility: () => undefined,
    serving: () => undefined,
  },
};
