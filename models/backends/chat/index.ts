/**
 * A chat endpoint as the ORM (each state judged on its own, so one unusable reply costs one verdict),
 * the task generator (in-breadth evolution) or the feasibility judge. WebArena's LLM judge is built
 * from its settings by env/evaluators/judge.ts.
 */
import { createChatOrm } from '../../remote/chatOrm';
import { judgeFeasibility } from '../../remote/feasibility';
import type { ModelBackend } from '../contract';
import { chatOptions, itemByItem } from '../remoteCalls';
import { settings } from './settings';
import { createChatTaskGenerator } from './taskGenerator';

export const backend: ModelBackend<typeof settings> = {
  name: 'chat',
  settings,
  roles: {
    orm: (orm, { secrets, signal, heartbeats }) => ({
      trainedByCampaign: false,
      async judge(_checkpoint, items) {
        const judge = createChatOrm({
          ...chatOptions(orm, secrets, signal()),
          topLogprobs: orm.topLogprobs,
          actionTargets: orm.actionTargets,
          concurrency: orm.concurrency,
          ...(orm.maxObservationChars !== undefined ? { maxObservationChars: orm.maxObservationChars } : {}),
        });
        const judged = itemByItem(items, orm.concurrency, async ({ state }) => (await judge.judge([state]))[0]!);
        const { results, failures } = await heartbeats.withHeartbeats(() => ({ judging: items.length }), judged);
        return { verdicts: results, failures };
      },
    }),
    taskGenerator: (generator, { secrets, signal }) => createChatTaskGenerator(generator, () => chatOptions(generator, secrets, signal())),
    feasibility: (feasibility, { secrets, signal }) => ({
      model: feasibility.model,
      judge: (tasks) =>
        judgeFeasibility(tasks, {
          ...chatOptions(feasibility, secrets, signal()),
          batchSize: feasibility.batchSize,
          concurrency: feasibility.concurrency,
          keepUnjudged: feasibility.keepUnjudged,
        }),
    }),
  },
};
