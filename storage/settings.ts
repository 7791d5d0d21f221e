/** The store's settings (the config's `s3` section): the store owns them, the config composes them. */
import { z } from 'zod';
import { httpUrl } from '../config/fields';

/** S3 bucket naming rules (3-63 chars, lower-case, digits, dots, dashes). */
const bucket = z.string().regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'expected a valid S3 bucket name (3-63 lower-case letters, digits, dots, dashes)');

const prefix = z.string().refine((p) => p === '' || (/^[A-Za-z0-9!_.*'()/-]+$/.test(p) && !p.startsWith('/') && p.endsWith('/')), {
  message: "expected '' or a key prefix without a leading '/' that ends with '/', e.g. 'webrl/'",
});

export const S3ConfigSchema = z.strictObject({
  /** Omit to use the local stack's MinIO; for AWS give the regional endpoint (https://s3.<region>.amazonaws.com). */
  endpoint: httpUrl.optional(),
  region: z.string().min(1).default('us-east-1'),
  bucket: bucket.default('webrl'),
  prefix: prefix.default(''),
  forcePathStyle: z.boolean().default(true),
  /** Attempts per request for transient faults (throttling, 5xx, dropped connections). */
  maxAttempts: z.number().int().min(1).max(20).default(6),
});

/** The store's settings once the config resolved them (an unset endpoint is the local stack's MinIO). */
export type S3Config = z.output<typeof S3ConfigSchema> & { endpoint: string };
