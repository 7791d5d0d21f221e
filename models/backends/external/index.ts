/** An external trainer command (webrl-torch's, or the user's), told how the actor it trains writes its prompts and what the server loads. */
import type { ModelBackend } from '../contract';
import { settings } from './settings';
import { externalTrainer } from './trainer';

/** WebRL's passes over the data (SFT 1 and ORM 4 in its LLaMA-Factory configs; critic and actor 1 per phase in webrl.yaml). */
const WEBRL_EPOCHS = { sftEpochs: 1, ormEpochs: 4, criticEpochs: 1, actorEpochs: 1 } as const;

export const backend: ModelBackend<typeof settings> = {
  name: 'external',
  settings,
  defaults: { epochs: WEBRL_EPOCHS },
  roles: {
    trainer: (trainer, deps, { actor, serving }) =>
      externalTrainer(deps, trainer, {
        trainsFromRecords: actor?.prompts !== undefined,
        maxLoraRank: serving?.maxLoraRank,
        ...actor?.recordFormat,
      }),
  },
};
