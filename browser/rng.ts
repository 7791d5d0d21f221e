/**
 * The project's one seeded PRNG (mulberry32) and seed hash (FNV-1a). Every random choice derives its
 * stream from the campaign seed plus labels (task, round, purpose), so results do not depend on
 * scheduling. The whole state is one uint32 that can be stored and restored, so a training run resumed
 * from a checkpoint draws exactly the numbers an uninterrupted run would have drawn.
 */
export class SeededRng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** The state to store in a checkpoint; `SeededRng.fromState` continues the same stream. */
  getState(): number {
    return this.state;
  }

  static fromState(state: number): SeededRng {
    return new SeededRng(state);
  }

  /** A uniform float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** A standard normal draw (Box-Muller; one of the pair is discarded to keep the state a single word). */
  normal(): number {
    const u = 1 - this.next();
    const v = this.next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }

  /** A uniformly random permutation of 0..n-1 (Fisher-Yates). */
  permutation(n: number): number[] {
    const order = Array.from({ length: n }, (_, i) => i);
    for (let i = n - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1));
      const swap = order[i]!;
      order[i] = order[j]!;
      order[j] = swap;
    }
    return order;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError('pick from an empty list');
    return items[Math.floor(this.next() * items.length)]!;
  }
}

/** A 32-bit seed from a list of values (FNV-1a over their UTF-16 units), to derive independent streams. */
export function deriveSeed(...parts: (string | number)[]): number {
  let hash = 0x811c9dc5;
  const text = parts.join('\u0000');
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}
