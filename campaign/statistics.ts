/**
 * The statistics every report states beside a success rate: how sure a success rate is, and whether
 * one evaluation beat another on the same tasks.
 *
 * - A success rate gets a Wilson score 95% interval: closed form (nothing random), it stays inside
 *   [0, 1] and keeps its stated coverage at the sizes and rates these evaluations have (a type at 0 of
 *   50 or 50 of 50, 20 episodes), where the normal approximation collapses to a zero-width interval.
 * - Two evaluations of the same tasks are compared pair by pair (each task's outcome before and
 *   after): the difference in success with a paired bootstrap 95% percentile interval (seeded, so a
 *   report prints the same interval every time), and McNemar's exact two-sided p-value, the binomial
 *   test of the discordant pairs (tasks one evaluation solved and the other did not).
 */
import { Rng } from '../env/random';

export interface Interval {
  low: number;
  high: number;
}

/** The 97.5% quantile of the standard normal distribution: a two-sided 95% interval. */
const Z95 = 1.959963984540054;

/** Wilson's score interval for `successes` of `n` (95%); [0, 1] when there is nothing to go by. */
export function wilsonInterval(successes: number, n: number): Interval {
  if (n === 0) return { low: 0, high: 1 };
  const p = successes / n;
  const z2n = (Z95 * Z95) / n;
  const center = (p + z2n / 2) / (1 + z2n);
  const half = (Z95 / (1 + z2n)) * Math.sqrt((p * (1 - p)) / n + z2n / (4 * n));
  // At 0 or n successes the bound is exactly 0 or 1; the formula reaches it only up to rounding.
  return { low: successes === 0 ? 0 : center - half, high: successes === n ? 1 : center + half };
}

/**
 * McNemar's exact two-sided p-value: under "neither evaluation is better", each of the n =
 * improved + worsened discordant pairs goes either way with probability 1/2, so the p-value is
 * 2 P(X <= min(improved, worsened)) for X ~ Binomial(n, 1/2), at most 1. The binomial terms are
 * summed as mantissa times a power of two, rescaled by exact powers of two, so small cases come out
 * exact and thousands of pairs neither overflow nor underflow before the end.
 */
export function exactMcNemarP(improved: number, worsened: number): number {
  const n = improved + worsened;
  const k = Math.min(improved, worsened);
  const SCALE = 2 ** 500;
  // P(X = i) = term * 2^exponent, from P(X = 0) = 2^-n by the ratio P(X = i) / P(X = i - 1) = (n - i + 1) / i.
  let term = 1;
  let sum = 1;
  let exponent = -n;
  for (let i = 1; i <= k; i++) {
    term *= (n - i + 1) / i;
    sum += term;
    if (sum > SCALE) {
      term /= SCALE;
      sum /= SCALE;
      exponent += 500;
    }
  }
  let p = 2 * sum;
  for (; exponent < -500; exponent += 500) p /= SCALE;
  return Math.min(1, p * 2 ** exponent);
}

/** One task's outcome (1 solved, 0 not) in the evaluation compared from and the one compared to. */
export interface Pair {
  /** Pairs with the same cluster are resampled together (the same task under several campaign seeds). */
  cluster: string;
  before: number;
  after: number;
}

export interface PairedDifference {
  pairs: number;
  /** Pairs failed before and solved after, and the other way round. */
  improved: number;
  worsened: number;
  /** Mean of after - before (a fraction: 0.05 is 5 points). */
  difference: number;
  /** Paired bootstrap 95% percentile interval of `difference`. */
  interval: Interval;
  /** McNemar's exact two-sided p-value. */
  pValue: number;
}

const RESAMPLES = 10_000;

/** The value at quantile q of sorted values (linear between neighbours). */
function quantile(sorted: Float64Array, q: number): number {
  const at = q * (sorted.length - 1);
  const below = Math.floor(at);
  const above = Math.min(sorted.length - 1, below + 1);
  return sorted[below]! + (at - below) * (sorted[above]! - sorted[below]!);
}

/**
 * The difference between two evaluations of the same tasks. The bootstrap resamples clusters (a
 * task, with its pairs from every campaign seed pooled), since the tasks are what a gain should
 * carry over to; with one pair per cluster it is the plain paired bootstrap.
 */
export function pairedDifference(pairs: Pair[], seed: number, resamples = RESAMPLES): PairedDifference {
  const clusters = new Map<string, { sum: number; count: number }>();
  let improved = 0;
  let worsened = 0;
  for (const { cluster, before, after } of pairs) {
    const entry = clusters.get(cluster) ?? { sum: 0, count: 0 };
    entry.sum += after - before;
    entry.count++;
    clusters.set(cluster, entry);
    if (after > before) improved++;
    if (after < before) worsened++;
  }
  const sums = Float64Array.from(clusters.values(), (c) => c.sum);
  const counts = Float64Array.from(clusters.values(), (c) => c.count);
  const difference = pairs.length ? sums.reduce((a, b) => a + b, 0) / pairs.length : 0;
  let interval: Interval = { low: difference, high: difference };
  if (clusters.size > 1) {
    const rng = new Rng(seed);
    const size = sums.length;
    const means = new Float64Array(resamples);
    for (let r = 0; r < resamples; r++) {
      let sum = 0;
      let count = 0;
      for (let i = 0; i < size; i++) {
        const drawn = Math.floor(rng.next() * size);
        sum += sums[drawn]!;
        count += counts[drawn]!;
      }
      means[r] = sum / count;
    }
    means.sort();
    interval = { low: quantile(means, 0.025), high: quantile(means, 0.975) };
  }
  return { pairs: pairs.length, improved, worsened, difference, interval, pValue: exactMcNemarP(improved, worsened) };
}
