/**
 * Seeded randomness for data and task generation. Each consumer forks its own stream by label, so
 * adding data in one place never shifts the values drawn somewhere else.
 */
import { SeededRng, deriveSeed } from '../browser/rng';

/** The project's PRNG with the helpers data generation needs, and named sub-streams. */
export class Rng extends SeededRng {
  constructor(readonly seed: number) {
    super(seed);
  }

  /** An independent stream named by `label`, derived from this stream's seed. */
  fork(label: string): Rng {
    return new Rng(deriveSeed(`${this.seed}:${label}`));
  }

  /** An integer in [min, max], both included. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  /** The items in a uniformly random order (the same draws as `permutation`). */
  shuffle<T>(items: readonly T[]): T[] {
    return this.permutation(items.length).map((i) => items[i]!);
  }

  sample<T>(items: readonly T[], count: number): T[] {
    return this.shuffle(items).slice(0, count);
  }

  /**
   * `count` items spread evenly over the groups `groupOf` names: groups in a random order take one item
   * each, round after round (each group's items in a random order), until `count` are taken or every
   * group is spent. A group is never left out while another has two more items in the sample.
   */
  stratifiedSample<T>(items: readonly T[], count: number, groupOf: (item: T) => string): T[] {
    const groups = new Map<string, T[]>();
    for (const item of items) {
      const group = groupOf(item);
      const members = groups.get(group);
      if (members) members.push(item);
      else groups.set(group, [item]);
    }
    const queues = this.shuffle([...groups.keys()].sort()).map((group) => this.shuffle(groups.get(group)!));
    const picked: T[] = [];
    for (let round = 0; picked.length < count && queues.some((queue) => round < queue.length); round++) {
      for (const queue of queues) if (round < queue.length && picked.length < count) picked.push(queue[round]!);
    }
    return picked;
  }

  /** Picks by weight; weights need not sum to 1. */
  weighted<T>(entries: readonly (readonly [T, number])[]): T {
    const total = entries.reduce((sum, [, w]) => sum + w, 0);
    let r = this.next() * total;
    for (const [value, weight] of entries) {
      r -= weight;
      if (r < 0) return value;
    }
    const last = entries[entries.length - 1];
    if (!last) throw new Error('weighted pick from an empty list');
    return last[0];
  }
}
