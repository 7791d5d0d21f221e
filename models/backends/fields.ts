/** Settings several model backends share: a remote endpoint's transport (keys come from the environment, config/secrets.ts). */
import { z } from 'zod';
import { httpUrl } from '../../config/fields';

export const endpointFields = {
  /** OpenAI-compatible base URL, e.g. http://127.0.0.1:8000/v1 */
  baseUrl: httpUrl,
  model: z.string().min(1),
  /** Per request. */
  timeoutMs: z.number().int().min(100).max(3_600_000).default(120_000),
  /** Tries per request, the first included. */
  maxAttempts: z.number().int().min(1).max(20).default(3),
  retryDelayMs: z.number().int().min(0).max(600_000).default(500),
  /** Requests in flight. */
  concurrency: z.number().int().min(1).max(256).default(4),
};

/** The settings of a backend that takes none but its name. */
export const nameOnly = <N extends string>(name: N) => z.strictObject({ backend: z.literal(name) });
