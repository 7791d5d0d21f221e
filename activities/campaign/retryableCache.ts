/**
 * Per-worker caches of things read from storage (configs, models). A read that failed (storage was
 * down for a moment) must not be kept: the activity's retry has to read again, not fail at once on
 * the cached failure until the worker restarts.
 */
export function cachedUnlessFailed<T>(cache: Map<string, Promise<T>>, key: string, make: () => Promise<T>): Promise<T> {
  let value = cache.get(key);
  if (!value) {
    const made = make();
    made.catch(() => {
      if (cache.get(key) === made) cache.delete(key);
    });
    cache.set(key, made);
    value = made;
  }
  return value;
}
