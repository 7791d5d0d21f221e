/**
 * The completions actor's check before a campaign starts: every problem of its SFT data file (each
 * naming the field and the file) and whether its init checkpoint is there. Sources in the store are
 * checked only with a store.
 */
import { existsSync } from 'node:fs';
import { promptFormatOf } from '../../../browser/policies/promptFormat';
import { readCheckpointListing } from '../../../storage/checkpoints';
import { SftDataError, type ChatRenderer } from '../../train/sftData';
import type { ModelCheck } from '../contract';
import type { CompletionsActorSettings } from './settings';
import { sftDataPairs } from './sftSource';

/** The SFT file's structure alone, for a chat-template actor whose model (and template) the main job provisions later. */
const structureOnly: ChatRenderer = (messages) => messages.map((message) => `${message.role}: ${message.content}`).join('\n');

export const completionsActorCheck: ModelCheck<CompletionsActorSettings> = {
  readsStore: (actor) => actor.sftData?.key !== undefined || (actor.init !== undefined && 'key' in actor.init),
  async problems(actor, { store, servedHere }) {
    const problems: string[] = [];
    if (actor.sftData && (actor.sftData.path !== undefined || store)) {
      const provisionedLater = actor.promptFormat === 'chat-template' && servedHere && !existsSync(actor.tokenizer ?? '');
      const format = provisionedLater ? undefined : promptFormatOf(actor);
      const render = provisionedLater ? structureOnly : format?.renderChat?.bind(format);
      await sftDataPairs(actor, render, store).catch((error: unknown) => {
        if (!(error instanceof SftDataError)) throw error;
        for (const problem of error.problems) problems.push(`${error.source}: ${problem}`);
      });
    }
    const init = actor.init;
    if (init && 'path' in init && !existsSync(init.path)) problems.push(`models.actor.init.path: ${init.path} does not exist`);
    if (init && 'key' in init && store && !(await store.exists(init.key)) && !(await readCheckpointListing(store, init.key))) {
      problems.push(`models.actor.init.key: the store has no checkpoint at ${init.key}`);
    }
    return problems;
  },
};
