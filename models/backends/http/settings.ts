/** A critic behind an HTTP endpoint (models/remote/httpCritic.ts), kept as it is. */
import { z } from 'zod';
import { endpointFields } from '../fields';

/** The transport of a critic server (http here, served too). */
export const criticServerFields = {
  baseUrl: endpointFields.baseUrl,
  timeoutMs: endpointFields.timeoutMs,
  maxAttempts: endpointFields.maxAttempts,
  retryDelayMs: endpointFields.retryDelayMs,
  batchSize: z.number().int().min(1).max(4096).default(32),
};

export const settings = { critic: z.strictObject({ backend: z.literal('http'), ...criticServerFields }) };
