/**
 * A MiniWoB++ suite score as papers report one (docs/miniwob.md): the success rate of each task type over
 * its episodes, and their mean over types (each type weighs the same, however many episodes it ran).
 * An episode counts by its score (1: the page's reward was positive); one that ended as an infrastructure
 * failure is left out of its type's rate, as the rollout summary leaves it out of the mean score.
 */
import { parseMiniwobTaskId } from './episode';

export interface SuiteEpisode {
  taskId: string | number;
  score: number;
  infraFailure: boolean;
}

export interface TypeScore {
  type: string;
  episodes: number;
  successes: number;
  /** successes / episodes; 0 for a type whose every episode was an infrastructure failure. */
  rate: number;
}

export interface SuiteScore {
  types: TypeScore[];
  /** The mean of the types' rates. */
  meanOverTypes: number;
  episodes: number;
}

/** Per-type success and the mean over types of MiniWoB++ episodes (other tasks are ignored); types in name order. */
export function miniwobSuiteScore(outcomes: readonly SuiteEpisode[]): SuiteScore {
  const byType = new Map<string, TypeScore>();
  for (const outcome of outcomes) {
    const ref = parseMiniwobTaskId(String(outcome.taskId));
    if (!ref || outcome.infraFailure) continue;
    const score = byType.get(ref.type) ?? { type: ref.type, episodes: 0, successes: 0, rate: 0 };
    score.episodes++;
    if (outcome.score >= 1) score.successes++;
    score.rate = score.successes / score.episodes;
    byType.set(ref.type, score);
  }
  const types = [...byType.values()].sort((a, b) => a.type.localeCompare(b.type));
  return {
    types,
    meanOverTypes: types.length ? types.reduce((sum, t) => sum + t.rate, 0) / types.length : 0,
    episodes: types.reduce((sum, t) => sum + t.episodes, 0),
  };
}

/** The per-type table, one line a type, and the mean over types. */
export function formatSuiteScore(score: SuiteScore): string {
  const width = Math.max(9, ...score.types.map((t) => t.type.length));
  const lines = score.types.map((t) => `${t.type.padEnd(width)}  ${String(t.successes).padStart(3)}/${String(t.episodes).padEnd(3)}  ${t.rate.toFixed(2)}`);
  return [
    `${'task type'.padEnd(width)}  success  rate`,
    ...lines,
    `mean over ${score.types.length} types: ${score.meanOverTypes.toFixed(3)} (${score.episodes} episodes)`,
  ].join('\n');
}

/** `BENCH <prefix>.success.<type>` per type and `BENCH <prefix>.mean_over_types`. */
export function suiteScoreBenchLines(score: SuiteScore, prefix = 'miniwob'): string[] {
  return [
    ...score.types.map((t) => `BENCH ${prefix}.success.${t.type} ${t.rate.toFixed(3)} fraction`),
    `BENCH ${prefix}.mean_over_types ${score.meanOverTypes.toFixed(3)} fraction`,
  ];
}
