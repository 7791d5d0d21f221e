/** An external trainer command (webrl-torch's, or the user's), told how the actor it trains writes its prompts and what the server loads. */
import { externalTrainer } from '../../../activities/campaign/trainers';
import { WEBRL_EPOCHS } from '../../../config/schema';
import type { ModelBackend } from '../contract';
import { settings } from './settings';

export const backend: ModelBackend<typeof settings> = {
  name: 'external',
  settings,
  defaults: { epochs: WEBRL_EPOCHS },
  roles: {
    trainer: (trainer, { ctx }, { actor, serving }) =>
      externalTrainer(ctx, trainer, {
        trainsFromRecords: actor?.prompts !== undefined,
        maxLoraRank: serving?.maxLoraRank,
        ...actor?.recordFormat,
      }),
  },
};
