/** A critic behind an HTTP endpoint, asked in batches; a completions actor's prompt goes with each state. */
import { createHttpCritic } from '../../remote/httpCritic';
import type { ModelBackend } from '../contract';
import { batchedCritic } from '../remoteCalls';
import { settings } from './settings';

export const backend: ModelBackend<typeof settings> = {
  name: 'http',
  settings,
  roles: {
    critic: (critic, { secrets, signal, heartbeats }, { actor }) =>
      batchedCritic(
        async () =>
          createHttpCritic({
            baseURL: critic.baseUrl,
            timeoutMs: critic.timeoutMs,
            maxAttempts: critic.maxAttempts,
            retryDelayMs: critic.retryDelayMs,
            batchSize: critic.batchSize,
            ...(actor?.prompts ? { prompts: actor.prompts } : {}),
            ...(secrets.criticApiKey ? { apiKey: secrets.criticApiKey } : {}),
            signal: signal(),
          }),
        critic.batchSize,
        heartbeats,
      ),
  },
};
