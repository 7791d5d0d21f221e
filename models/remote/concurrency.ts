/** Bounded parallelism for batched remote calls. */

/** Runs `work` over `items` with at most `limit` in flight, keeping the input order in the result. */
export async function mapWithConcurrency<T, R>(items: readonly T[], limit: number, work: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const runners = Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]!, index);
    }
  });
  await Promise.all(runners);
  return results;
}

export type Settled<R> = { ok: true; value: R } | { ok: false; reason: string };

/**
 * `mapWithConcurrency` where one item's failure is reported in its slot instead of failing the batch:
 * a remote model's bad reply for one state must not cost the other states their results.
 */
export async function mapSettled<T, R>(items: readonly T[], limit: number, work: (item: T, index: number) => Promise<R>): Promise<Settled<R>[]> {
  return mapWithConcurrency(items, limit, async (item, index): Promise<Settled<R>> => {
    try {
      return { ok: true, value: await work(item, index) };
    } catch (error) {
      return { ok: false, reason: error instanceof Error ? error.message : String(error) };
    }
  });
}
