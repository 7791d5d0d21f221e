/**
 * Did a phase help? For each phase's held-out evaluation: its success with a 95% interval, and the
 * paired difference to SFT (phase 0) and to the phase before it over the tasks both evaluated,
 * overall and per task type (a MiniWoB++ task's type, any other task's site). Read from the
 * per-task outcomes each phase's evaluation object stores (`artifacts.evaluation`).
 */
import type { EvaluationResult } from '../activities/campaign/controlActivities';
import { deriveSeed } from '../browser/rng';
import { parseMiniwobTaskId } from '../env/backends/miniwob/episode';
import type { ArtifactStore, Manifest } from '../storage/artifactStore';
import type { PhaseManifestData } from '../activities/campaign/phaseManifest';
import { pairedDifference, wilsonInterval, type Interval, type Pair, type PairedDifference } from './statistics';

export type EvaluatedTask = Pick<EvaluationResult['tasks'][number], 'taskId' | 'site' | 'score'>;

/** The group a task is reported under: its MiniWoB++ type, else its site. */
export function taskGroup(task: Pick<EvaluatedTask, 'taskId' | 'site'>): string {
  return parseMiniwobTaskId(task.taskId)?.type ?? task.site;
}

/** Every backend's evaluators score 0 or 1; a score in between counts by the nearer of the two. */
const solved = (score: number) => (score >= 0.5 ? 1 : 0);

export interface Success {
  successes: number;
  episodes: number;
  rate: number;
  /** Wilson 95%. */
  interval: Interval;
}

function success(tasks: EvaluatedTask[]): Success {
  const successes = tasks.reduce((sum, task) => sum + solved(task.score), 0);
  return { successes, episodes: tasks.length, rate: tasks.length ? successes / tasks.length : 0, interval: wilsonInterval(successes, tasks.length) };
}

/**
 * Pairs of the tasks evaluated both before and after, by task id. The task id is the pair's cluster,
 * so pairs of the same task from several campaign seeds, pooled, are resampled together.
 */
export function pairByTask(before: Pick<EvaluatedTask, 'taskId' | 'score'>[], after: Pick<EvaluatedTask, 'taskId' | 'score'>[]): Pair[] {
  const earlier = new Map(before.map((task) => [task.taskId, solved(task.score)]));
  return after
    .filter((task) => earlier.has(task.taskId))
    .map((task) => ({ cluster: task.taskId, before: earlier.get(task.taskId)!, after: solved(task.score) }));
}

export interface Comparison {
  /** The phase compared with. */
  phase: number;
  overall: PairedDifference;
  byGroup: Record<string, PairedDifference>;
}

export interface PhaseEvidence {
  phase: number;
  overall: Success;
  byGroup: Record<string, Success>;
  /** Against phase 0 (SFT); absent for phase 0 itself. */
  vsSft?: Comparison;
  /** Against the phase before; absent for phase 0 and 1 (whose previous phase is SFT). */
  vsPrevious?: Comparison;
}

function byGroup<T>(tasks: EvaluatedTask[], measure: (tasks: EvaluatedTask[], group: string) => T): Record<string, T> {
  const groups = new Map<string, EvaluatedTask[]>();
  for (const task of tasks) groups.set(taskGroup(task), [...(groups.get(taskGroup(task)) ?? []), task]);
  return Object.fromEntries([...groups].sort(([a], [b]) => a.localeCompare(b)).map(([group, members]) => [group, measure(members, group)]));
}

/**
 * The comparison of two phases' evaluations. The bootstrap's seed derives from what is compared
 * (campaign, phases, group), so the same campaign's report prints the same intervals every time.
 */
function compare(campaignId: string, before: { phase: number; tasks: EvaluatedTask[] }, after: { phase: number; tasks: EvaluatedTask[] }): Comparison {
  const seed = (group: string) => deriveSeed('evidence', campaignId, before.phase, after.phase, group);
  const earlier = before.tasks;
  return {
    phase: before.phase,
    overall: pairedDifference(pairByTask(earlier, after.tasks), seed('')),
    byGroup: byGroup(after.tasks, (tasks, group) => pairedDifference(pairByTask(earlier, tasks), seed(group))),
  };
}

/** The evidence of each evaluated phase (phases whose evaluation stored no tasks are left out). */
export function phaseEvidence(campaignId: string, evaluations: { phase: number; tasks: EvaluatedTask[] }[]): PhaseEvidence[] {
  const evaluated = evaluations.filter((e) => e.tasks.length > 0).sort((a, b) => a.phase - b.phase);
  const sft = evaluated.find((e) => e.phase === 0);
  return evaluated.map((evaluation, i) => {
    const previous = evaluated[i - 1];
    return {
      phase: evaluation.phase,
      overall: success(evaluation.tasks),
      byGroup: byGroup(evaluation.tasks, success),
      ...(sft && evaluation.phase > 0 ? { vsSft: compare(campaignId, sft, evaluation) } : {}),
      ...(previous && previous.phase > 0 ? { vsPrevious: compare(campaignId, previous, evaluation) } : {}),
    };
  });
}

/** Each published phase's evaluated tasks, as its evaluation object stored them (none when it stored no tasks). */
export async function readEvaluations(
  store: ArtifactStore,
  manifests: Manifest<PhaseManifestData>[],
): Promise<{ phase: number; tasks: EvaluationResult['tasks'] }[]> {
  return Promise.all(
    manifests.map(async (m) => ({ phase: m.data.phase, tasks: (await store.tryGetJson<EvaluationResult>(m.data.artifacts.evaluation))?.tasks ?? [] })),
  );
}

const points = (x: number) => `${x >= 0 ? '+' : ''}${(100 * x).toFixed(1)}`;

/** `45.0% [38.3, 52.0]`: a success rate and its interval. */
export function formatSuccess(s: Success): string {
  return `${(100 * s.rate).toFixed(1)}% [${(100 * s.interval.low).toFixed(1)}, ${(100 * s.interval.high).toFixed(1)}]`;
}

/** `+5.0 [-1.5, +11.5]`: a difference in points and its interval. */
export function formatDifference(d: PairedDifference): string {
  return `${points(d.difference)} [${points(d.interval.low)}, ${points(d.interval.high)}]`;
}

export function formatP(p: number): string {
  return p < 0.001 ? '<0.001' : p.toFixed(3);
}

/** Did-it-help in words: a change counts when the interval excludes 0 and McNemar's test agrees (p < 0.05). */
export function changeVerdict(difference: PairedDifference): 'better' | 'worse' | 'no detectable change' {
  if (difference.pValue < 0.05 && difference.interval.low > 0) return 'better';
  if (difference.pValue < 0.05 && difference.interval.high < 0) return 'worse';
  return 'no detectable change';
}

/** The columns of `evidenceCells`, after the row's label. */
export const EVIDENCE_COLUMNS = ['episodes', 'success (95% CI)', 'vs SFT (95% CI)', 'p', 'vs SFT', 'vs previous (95% CI)', 'p'];

/** A phase's success and comparisons, overall or for one task type, as table cells ('-' where there is nothing to compare). */
export function evidenceCells(e: PhaseEvidence, group?: string): string[] {
  const own = group === undefined ? e.overall : e.byGroup[group];
  const sft = group === undefined ? e.vsSft?.overall : e.vsSft?.byGroup[group];
  const previous = group === undefined ? e.vsPrevious?.overall : e.vsPrevious?.byGroup[group];
  return [
    own ? String(own.episodes) : '0',
    own ? formatSuccess(own) : '-',
    sft?.pairs ? formatDifference(sft) : '-',
    sft?.pairs ? formatP(sft.pValue) : '-',
    sft?.pairs ? changeVerdict(sft) : '-',
    previous?.pairs ? formatDifference(previous) : '-',
    previous?.pairs ? formatP(previous.pValue) : '-',
  ];
}
