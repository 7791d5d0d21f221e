/**
 * A copy-on-write view of a seed table: reads fall through to the shared, never-mutated seed rows;
 * writes land in this episode's own overlay. A fresh episode is an empty overlay, so a reset costs
 * nothing but two empty maps. Rows are treated as immutable values: update by replacing.
 */
const DELETED = Symbol('deleted');

export class CowTable<K, V> {
  private readonly changes = new Map<K, V | typeof DELETED>();
  private nextKey: number;

  constructor(
    private readonly base: ReadonlyMap<K, V>,
    /** The first numeric id new rows get (seed max + 1); unused for tables keyed by name. */
    firstNewId = base.size + 1,
  ) {
    this.nextKey = firstNewId;
  }

  get(key: K): V | undefined {
    const changed = this.changes.get(key);
    if (changed === DELETED) return undefined;
    return changed ?? this.base.get(key);
  }

  has(key: K): boolean {
    return this.get(key) !== undefined;
  }

  set(key: K, value: V): void {
    this.changes.set(key, value);
  }

  delete(key: K): void {
    this.changes.set(key, DELETED);
  }

  /** Replaces a row with `change(row)`; returns the new row, or undefined when the key is absent. */
  update(key: K, change: (row: V) => V): V | undefined {
    const row = this.get(key);
    if (row === undefined) return undefined;
    const next = change(row);
    this.changes.set(key, next);
    return next;
  }

  /** How many rows this overlay changed, added or deleted. */
  get changedCount(): number {
    return this.changes.size;
  }

  /** Reserves the next numeric id for a new row. */
  allocateId(): number {
    return this.nextKey++;
  }

  /** Seed order first (changed rows keep their place), then rows this episode added. */
  *values(): IterableIterator<V> {
    for (const [key, value] of this.base) {
      const changed = this.changes.get(key);
      if (changed === DELETED) continue;
      yield changed ?? value;
    }
    for (const [key, value] of this.changes) {
      if (value !== DELETED && !this.base.has(key)) yield value;
    }
  }

  all(): V[] {
    return [...this.values()];
  }

  filter(keep: (row: V) => boolean): V[] {
    const out: V[] = [];
    for (const row of this.values()) if (keep(row)) out.push(row);
    return out;
  }

  find(match: (row: V) => boolean): V | undefined {
    for (const row of this.values()) if (match(row)) return row;
    return undefined;
  }
}

/** Builds the shared seed map of a table from rows and their key. */
export function indexBy<K, V>(rows: readonly V[], key: (row: V) => K): ReadonlyMap<K, V> {
  return new Map(rows.map((row) => [key(row), row]));
}

/** One more than the largest id, for `CowTable`'s first new id. */
export function nextIdAfter(rows: readonly { id: number }[]): number {
  return rows.reduce((max, row) => Math.max(max, row.id), 0) + 1;
}

/** Rows an episode or a standalone site changed, over every copy-on-write table of a state object. */
export function changedRows(state: unknown): number {
  if (!state || typeof state !== 'object') return 0;
  let rows = 0;
  for (const value of Object.values(state)) if (value instanceof CowTable) rows += value.changedCount;
  return rows;
}
