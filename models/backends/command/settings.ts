/** Each phase's trained actor (re)deployed by the user's command, then the server polled until it lists the name. */
import { z } from 'zod';
import { endpointFields } from '../fields';

/** The placeholders a deploy command may use. */
export const DEPLOY_PLACEHOLDERS = ['checkpoint', 'name', 'role'] as const;

export const settings = {
  serving: z.strictObject({
    backend: z.literal('command'),
    /** The server to poll (GET /v1/models) until the deployed name is listed. */
    baseUrl: endpointFields.baseUrl,
    /** e.g. `deploy.sh {checkpoint} {name} {role}`; run without a shell. */
    command: z.string().min(1),
    timeoutSeconds: z
      .number()
      .int()
      .min(1)
      .max(24 * 3600)
      .default(600),
    pollMs: z.number().int().min(10).max(60_000).default(1000),
  }),
};
