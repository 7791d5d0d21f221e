/**
 * What phase 0 trains a completions actor and its critic on, as training records written beside the
 * phase's datasets (so the external trainer reads prompts as the actor's rollouts write them, in its
 * prompt format, and never renders one itself): the oracle's demonstrations (unless
 * `models.actor.oracleDemonstrations` is off) and the pairs of `models.actor.sftData`; the critic's
 * oracle-graded states. And the checkpoint the actor starts from (`models.actor.init`), stored under
 * the phase's checkpoints when it is a local path.
 */
import type { PromptBuilder } from '../../browser/policies/promptBudget';
import type { CompletionsActorSettings } from '../../models/backends/completions/settings';
import { sftDataPairs } from '../../models/backends/completions/sftSource';
import { statePrompt } from '../../models/remote/completionsActor';
import { TRAINING_RECORD_SCHEMA_VERSION, type TrainingStepRecord } from '../../models/train/trainingRecord';
import type { ModelState } from '../../models/state';
import type { CriticExample } from './models';
import type { ArtifactStore } from '../../storage/artifactStore';
import { uploadCheckpoint } from '../../storage/checkpoints';

/** A demonstration step of trace `traceId` (step 0 unless given): done, rewarded, nothing after it. */
function demonstrationRecord(
  campaignId: string,
  traceId: string,
  prompt: string,
  response: string,
  mcReturn: number,
  state: ModelState | { intent: string },
  step = 0,
): TrainingStepRecord {
  return {
    schemaVersion: TRAINING_RECORD_SCHEMA_VERSION,
    kind: 'step',
    id: `${traceId}:${step}`,
    campaignId,
    phase: 0,
    taskId: traceId,
    traceId,
    step,
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

/**
 * The critic's phase-0 states as records: the prompt alone (no response), labelled by its Monte-Carlo
 * return, under its trajectory's trace (a row stored before examples named one is a trajectory alone).
 */
export async function criticSftRecords(
  campaignId: string,
  prompts: PromptBuilder,
  examples: readonly (Pick<CriticExample, 'state' | 'mcReturn'> & Partial<CriticExample>)[],
): Promise<TrainingStepRecord[]> {
  return Promise.all(
    examples.map(async (row, i) =>
      demonstrationRecord(campaignId, row.trajectory ?? `critic-${i}`, await statePrompt(prompts, row.state), '', row.mcReturn, row.state, row.step),
    ),
  );
}

/** The store key of the checkpoint phase 0's actor starts from: the configured key, or the local path stored at `localKey`. */
export async function actorInitKey(actor: CompletionsActorSettings, store: ArtifactStore, localKey: string): Promise<string | undefined> {
  if (!actor.init) return undefined;
  if ('key' in actor.init) return actor.init.key;
  await uploadCheckpoint(store, localKey, actor.init.path);
  return localKey;
}
