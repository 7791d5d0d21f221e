/** The embedded backend: the ONNX actor, critic and ORM the campaign trains (one session per checkpoint and worker), its trainer, and the environment's own task evolution. */
import { createActorPolicy } from '../../actorPolicy';
import type { ModelBackend } from '../contract';
import { statesOf } from '../remoteCalls';
import { settings } from './settings';
import { embeddedTrainer } from './trainer';

export const backend: ModelBackend<typeof settings> = {
  name: 'embedded',
  settings,
  roles: {
    actor: (_settings, { models }) => ({
      async policies(checkpoint, { temperature, seed }) {
        const onnx = await models.actor(checkpoint);
        return () => (temperature > 0 ? createActorPolicy(onnx, { mode: 'sample', temperature, seed }) : createActorPolicy(onnx, { mode: 'greedy' }));
      },
      async logProbs(checkpoint, items) {
        const onnx = await models.actor(checkpoint);
        return { logProbs: await onnx.logProbs(items.map(({ state, response }) => ({ state, response }))), failures: [] };
      },
    }),
    critic: (_settings, { models }) => ({
      valuesTasks: true,
      trainedByCampaign: true,
      async values(checkpoint, items) {
        return { values: await (await models.critic(checkpoint)).values(statesOf(items)), failures: [] };
      },
    }),
    orm: (_settings, { models }) => ({
      trainedByCampaign: true,
      async judge(checkpoint, items) {
        return { verdicts: await (await models.orm(checkpoint)).judge(statesOf(items)), failures: [] };
      },
    }),
    trainer: (_settings, deps) => embeddedTrainer(deps),
    // The environment's own evolution writes the curriculum's tasks.
    taskGenerator: () => undefined,
  },
};
