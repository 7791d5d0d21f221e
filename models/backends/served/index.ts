/**
 * The critic the campaign trains, served by `webrl-torch serve-critic`: each phase's critic is synced
 * under the server's --checkpoints directory by its storage key, and every request names it there, so
 * the server values with the checkpoint the phase asks for.
 */
import { join } from 'node:path';
import { syncCheckpoint } from '../../../storage/checkpoints';
import { createHttpCritic } from '../../remote/httpCritic';
import type { ModelBackend } from '../contract';
import { batchedCritic } from '../remoteCalls';
import { settings } from './settings';

export const backend: ModelBackend<typeof settings> = {
  name: 'served',
  settings,
  roles: {
    critic: (critic, { storage, secrets, signal, heartbeats }, { actor }) =>
      batchedCritic(
        async (checkpoint) => {
          await syncCheckpoint(storage.store, checkpoint, join(critic.sharedDir, checkpoint));
          return createHttpCritic({
            baseURL: critic.baseUrl,
            timeoutMs: critic.timeoutMs,
            maxAttempts: critic.maxAttempts,
            retryDelayMs: critic.retryDelayMs,
            batchSize: critic.batchSize,
            critic: checkpoint,
            ...(actor?.prompts ? { prompts: actor.prompts } : {}),
            ...(secrets.criticApiKey ? { apiKey: secrets.criticApiKey } : {}),
            signal: signal(),
          });
        },
        critic.batchSize,
        heartbeats,
        true,
      ),
  },
};
