/**
 * A phase's experience for trainers outside this project:
 *
 *   records  the training records (models/train/trainingRecord.ts), one JSON object per line
 *   webrl    the file WebRL's own trainer loads with torch.load (webrl/algorithms/offpolicy_train_loop.py),
 *            written by `webrl-torch export-webrl`: steps in the field layout of scripts/process_data.py's
 *            output (observation, action, reward, next_observation, done, mc_return, plus task,
 *            trajectory_reward and, for replayed steps, rank_score), as trajectory lists, or as one flat
 *            list when the file's name holds `_filter` (WebRL's loader decides by the name)
 *
 * A phase of a completions actor has its records stored beside the experience (with log-probs); for
 * any other phase they are built here from the experience rows, without log-probs.
 */
import type { ArtifactStore } from '../storage/artifactStore';
import { StoragePermanentError } from '../storage/errors';
import { replayedSource, stepRecordOf } from '../activities/campaign/trainingRecords';
import { createPromptBuilder } from '../browser/policies/promptBudget';
import { webrlLlama3Format } from '../browser/policies/promptFormat';
import type { ExperienceRow } from '../activities/campaign/experience';
import { trainingRecordsKey, trainingStepRecordSchema, type TrainingStepRecord } from '../models/train/trainingRecord';
import type { PhaseManifestData } from '../activities/campaign/phaseManifest';
import { phaseManifestKey } from '../storage/keys';

export interface WebRLExperienceItem {
  observation: string;
  action: string;
  /** WebRL gives every step of a trajectory the trajectory's score. */
  reward: number;
  next_observation: string;
  done: boolean;
  mc_return: number;
  task: string;
  trajectory_reward: number;
  rank_score?: number;
}

async function readAll<T>(store: ArtifactStore, key: string): Promise<T[]> {
  const rows: T[] = [];
  for await (const row of store.readJsonl<T>(key)) rows.push(row);
  return rows;
}

/** The phase's experience rows and their training records, in the same order. */
export async function phaseExperience(
  store: ArtifactStore,
  campaignId: string,
  phase: number,
  gamma: number,
): Promise<{ rows: ExperienceRow[]; records: TrainingStepRecord[] }> {
  const manifest = await store.readManifest<PhaseManifestData>(phaseManifestKey(campaignId, phase));
  if (!manifest) throw new StoragePermanentError(`campaign ${campaignId} has no published phase ${phase}`);
  const { experience } = manifest.data.artifacts;
  const rows = await readAll<ExperienceRow>(store, experience.key);
  const stored = (await store.exists(trainingRecordsKey(experience.key))) ? await readAll<unknown>(store, trainingRecordsKey(experience.key)) : undefined;
  if (stored) {
    const records = stored.map((row, i) => {
      const parsed = trainingStepRecordSchema.safeParse(row);
      if (!parsed.success) throw new StoragePermanentError(`${trainingRecordsKey(experience.key)} line ${i + 1} is not a step record: ${parsed.error.message}`);
      return parsed.data;
    });
    assertConsistentExperience(rows, records, { experience: experience.key, records: trainingRecordsKey(experience.key) });
    return { rows, records };
  }
  // The experience is this phase's steps, then the replayed ones.
  const firstReplayed = rows.length - manifest.data.summary.replayedSteps;
  // Phases stored without records predate prompt formats: their actor read the released checkpoints' prompt.
  const scope = { campaignId, phase, gamma, prompts: createPromptBuilder(webrlLlama3Format) };
  const records = await Promise.all(rows.map((row, i) => stepRecordOf(row, i >= firstReplayed ? replayedSource(row) : 'rollout', null, scope)));
  return { rows, records };
}

/**
 * A phase's stored training records must be its experience rows, one each and in order, and name each
 * step of a trajectory once: anything else is a damaged phase, refused with what is wrong rather than
 * exported as a file the trainer would refuse (or, worse, train on).
 */
export function assertConsistentExperience(
  rows: readonly ExperienceRow[],
  records: readonly TrainingStepRecord[],
  keys: { experience: string; records: string },
): void {
  if (records.length !== rows.length) {
    throw new StoragePermanentError(
      `${keys.records} holds ${records.length} training records but ${keys.experience} holds ${rows.length} experience rows: the phase's stored data is inconsistent`,
    );
  }
  const seen = new Map<string, number>();
  records.forEach((record, i) => {
    if (record.source === 'replay') return; // replayed steps are single steps of older trajectories
    const step = `${record.traceId}#${record.step}`;
    const first = seen.get(step);
    if (first !== undefined) {
      throw new StoragePermanentError(
        `${keys.records} lines ${first + 1} and ${i + 1} are both step ${record.step} of trace ${record.traceId}: the phase's stored data is inconsistent`,
      );
    }
    seen.set(step, i);
  });
}

function webrlItemOf(row: ExperienceRow, record: TrainingStepRecord): WebRLExperienceItem {
  const score = row.trajectoryReward ?? row.reward;
  return {
    observation: record.prompt,
    action: record.response,
    reward: score,
    // WebRL's last step has a next observation of its own page again; here it is the step's own prompt.
    next_observation: record.nextPrompt ?? record.prompt,
    done: record.done,
    mc_return: record.mcReturn,
    task: record.state.intent,
    trajectory_reward: score >= 0.5 ? 1 : 0,
    ...(record.source !== 'rollout' && record.rank !== null ? { rank_score: record.rank } : {}),
  };
}

/**
 * What WebRL's loader reads: a flat step list (every step, replayed ones included, as its replay filter
 * writes `*_filter.pt`), or the phase's own trajectories, each its steps in order (replayed steps are single
 * steps of older trajectories: WebRL recomputes mc_return per trajectory, so they are left out there).
 */
export function webrlTrainerData(rows: ExperienceRow[], records: TrainingStepRecord[], flat: boolean): WebRLExperienceItem[] | WebRLExperienceItem[][] {
  const items = rows.map((row, i) => webrlItemOf(row, records[i]!));
  if (flat) return items;
  const trajectories = new Map<string, { step: number; item: WebRLExperienceItem }[]>();
  records.forEach((record, i) => {
    if (record.source !== 'rollout') return;
    const steps = trajectories.get(record.traceId) ?? [];
    steps.push({ step: record.step, item: items[i]! });
    trajectories.set(record.traceId, steps);
  });
  return [...trajectories.values()].map((steps) => steps.sort((a, b) => a.step - b.step).map(({ item }) => item));
}
