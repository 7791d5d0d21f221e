/** The embedded backend's member of `campaign.environment` (the default: no `backend` means this one). */
import { z } from 'zod';
import { environmentFields } from '../environmentFields';

export const embeddedSettings = z.strictObject({
  /** `embedded`: four mini sites in each browser worker. */
  backend: z.literal('embedded').default('embedded'),
  ...environmentFields,
});
export type EmbeddedSettings = z.output<typeof embeddedSettings>;
