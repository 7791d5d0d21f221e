/**
 * bench:learning's figures from what its campaigns evaluated: held-out success at zero-shot, after
 * SFT and after each RL phase (the mean over the campaign seeds), and the last phase's gain over SFT
 * with its paired 95% interval, pooled over the seeds.
 */
import { pairByTask, type EvaluatedTask } from '../campaign/evidence';
import { pairedDifference } from '../campaign/statistics';
import { parseMiniwobTaskId } from '../env/backends/miniwob/episode';

export type ScoredTask = Pick<EvaluatedTask, 'taskId' | 'score'>;

export interface SeedRun {
  /** Per evaluation (phase 0 = SFT, then each RL phase): the test tasks' scores. */
  phases: ScoredTask[][];
  zeroShot?: ScoredTask[];
}

export type Figure = [name: string, value: number, unit: string];

const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
const typeOf = (task: ScoredTask) => parseMiniwobTaskId(task.taskId)?.type ?? task.taskId;

/** Success over a list of scored tasks, overall or for one task type (0 when it has none of that type). */
function successOf(tasks: ScoredTask[], type?: string): number {
  return mean(tasks.filter((task) => type === undefined || typeOf(task) === type).map((task) => task.score));
}

/**
 * The figures, in the order printed. `runs[0]` carries the zero-shot evaluation; `seed` (from the
 * campaign seeds) seeds the bootstrap. The gain's interval resamples test tasks with their pairs
 * from every seed, since the same test tasks are evaluated under each seed.
 */
export function learningFigures(runs: SeedRun[], types: string[], seed: number): Figure[] {
  const zeroShot = runs[0]?.zeroShot;
  if (!zeroShot) throw new Error('the first campaign seed carries no zero-shot evaluation');
  const phaseCount = Math.min(...runs.map((r) => r.phases.length));
  const last = phaseCount - 1;
  const overSeeds = (phase: number, type?: string) => mean(runs.map((r) => successOf(r.phases[phase]!, type)));
  const gain = pairedDifference(
    runs.flatMap((r) => pairByTask(r.phases[0]!, r.phases[last]!)),
    seed,
  );
  const evaluations = [zeroShot, ...runs.flatMap((r) => r.phases.slice(0, phaseCount))];
  const figures: Figure[] = [
    ['learning.zero_shot', successOf(zeroShot), 'success'],
    ['learning.sft', overSeeds(0), 'success'],
    ...Array.from({ length: last }, (_, i): Figure => [`learning.phase${i + 1}`, overSeeds(i + 1), 'success']),
    ['learning.final', overSeeds(last), 'success'],
    // The pooled pairs' mean difference: final minus SFT when every seed evaluated the same tasks.
    ['learning.gain_over_sft', 100 * gain.difference, 'points'],
    ['learning.gain_over_sft.ci_low', 100 * gain.interval.low, 'points'],
    ['learning.gain_over_sft.ci_high', 100 * gain.interval.high, 'points'],
    ['learning.eval_episodes', Math.min(...evaluations.map((tasks) => tasks.length)), 'episodes'],
  ];
  for (const type of types) {
    figures.push([`learning.${type}.zero_shot`, successOf(zeroShot, type), 'success']);
    figures.push([`learning.${type}.sft`, overSeeds(0, type), 'success']);
    figures.push([`learning.${type}.final`, overSeeds(last, type), 'success']);
  }
  return figures;
}
