/**
 * What phase 0 trains a completions actor and its critic on, as training records written beside the
 * phase's datasets (so the external trainer reads prompts as the actor's rollouts write them, in its
 * prompt format, and never renders one itself): the oracle's demonstrations (unless
 * `models.actor.oracleDemonstrations` is off) and the pairs of `models.actor.sftData`; the critic's
 * oracle-graded states. And the checkpoint the actor starts from (`models.actor.init`), stored under
 * the phase's checkpoints when it is a local path.
 */
import { readFile } from 'node:fs/promises';
import type { PromptBuilder } from '../../browser/policies/promptBudget';
import type { CompletionsActorSettings } from '../../models/backends/completions/settings';
import { ConfigError } from '../../config/errors';
import type { Config } from '../../config/campaignConfig';
import { promptFormatOf } from '../../browser/policies/promptFormat';
import { statePrompt } from '../../models/remote/completionsActor';
import { readSftData, SftDataError, type ChatRenderer, type SftPair } from '../../models/train/sftData';
import { TRAINING_RECORD_SCHEMA_VERSION, type TrainingStepRecord } from '../../models/train/trainingRecord';
import type { ModelState } from '../../models/state';
import type { ArtifactStore } from '../../storage/artifactStore';
import { uploadCheckpoint } from '../../storage/checkpoints';

/** A one-step demonstration: done, rewarded, nothing after it. */
function demonstrationRecord(
  campaignId: string,
  traceId: string,
  prompt: string,
  response: string,
  mcReturn: number,
  state: ModelState | { intent: string },
): TrainingStepRecord {
  return {
    schemaVersion: TRAINING_RECORD_SCHEMA_VERSION,
    kind: 'step',
    id: `${traceId}:0`,
    campaignId,
    phase: 0,
    taskId: traceId,
    traceId,
    step: 0,
    source: 'demonstration',
    prompt,
    response,
    nextPrompt: null,
    reward: mcReturn > 0 ? 1 : 0,
    done: true,
    mcReturn,
    refLogprob: null,
    responseTokens: null,
    rank: null,
    state: { ...state },
  };
}

/** The SFT data file's pairs, every problem listed (models/train/sftData.ts); read from here or from the store. */
export async function sftDataPairs(actor: CompletionsActorSettings, render: ChatRenderer | undefined, store: ArtifactStore | undefined): Promise<SftPair[]> {
  const source = actor.sftData;
  if (!source) return [];
  let text: string;
  if (source.path !== undefined) {
    try {
      text = await readFile(source.path, 'utf8');
    } catch (error) {
      throw new SftDataError(`models.actor.sftData.path (${source.path})`, [`cannot read the file: ${(error as NodeJS.ErrnoException).code ?? error}`]);
    }
  } else {
    if (!store) throw new Error(`models.actor.sftData.key ${source.key} needs the campaign's store`);
    text = (await store.getBytes(source.key!)).toString('utf8');
  }
  const where = source.path !== undefined ? `models.actor.sftData.path (${source.path})` : `models.actor.sftData.key (${source.key})`;
  return readSftData(where, text, source.format, render);
}

export async function actorSftRecords(
  campaignId: string,
  actor: CompletionsActorSettings,
  prompts: PromptBuilder,
  store: ArtifactStore,
  demonstrations: readonly { state: ModelState; response: string }[],
): Promise<TrainingStepRecord[]> {
  const oracle = actor.oracleDemonstrations
    ? await Promise.all(
        demonstrations.map(async (row, i) => demonstrationRecord(campaignId, `oracle-${i}`, await statePrompt(prompts, row.state), row.response, 1, row.state)),
      )
    : [];
  const file = (await sftDataPairs(actor, prompts.format.renderChat?.bind(prompts.format), store)).map((pair, i) =>
    demonstrationRecord(campaignId, `sft-data-${i}`, pair.prompt, pair.response, 1, { intent: '' }),
  );
  return [...oracle, ...file];
}

/** The critic's phase-0 states as records: the prompt alone (no response), labelled by its Monte-Carlo return. */
export async function criticSftRecords(
  campaignId: string,
  prompts: PromptBuilder,
  examples: readonly { state: ModelState; mcReturn: number }[],
): Promise<TrainingStepRecord[]> {
  return Promise.all(
    examples.map(async (row, i) => demonstrationRecord(campaignId, `critic-${i}`, await statePrompt(prompts, row.state), '', row.mcReturn, row.state)),
  );
}

/** The store key of the checkpoint phase 0's actor starts from: the configured key, or the local path stored at `localKey`. */
export async function actorInitKey(actor: CompletionsActorSettings, store: ArtifactStore, localKey: string): Promise<string | undefined> {
  if (!actor.init) return undefined;
  if ('key' in actor.init) return actor.init.key;
  await uploadCheckpoint(store, localKey, actor.init.path);
  return localKey;
}
