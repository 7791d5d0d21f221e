/**
 * The critic the campaign trains (webrl-torch's checkpoints), served by `webrl-torch serve-critic
 * --checkpoints DIR`: each phase's critic is synced into `sharedDir` and every request names the
 * one to value with, so the filter of phase k values with the critic phase k-1 trained.
 */
import { z } from 'zod';
import { criticServerFields } from '../http/settings';

export const settings = {
  critic: z.strictObject({
    backend: z.literal('served'),
    ...criticServerFields,
    /** The server's --checkpoints directory as the workers see it. */
    sharedDir: z.string().min(1),
  }),
};
