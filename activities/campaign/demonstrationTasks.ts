/** Which train tasks a campaign's phase 0 demonstrates: a sample seeded by the campaign, or the whole split. */
import { Rng } from '../../env/random';
import type { EnvironmentTask } from '../../env/backends/contract';

/** `wanted` tasks of the train split, sampled with the campaign's seed; 0, or at least the split's size, means all of it. */
export function demonstrationTasks<T extends EnvironmentTask>(train: readonly T[], wanted: number, seed: number): readonly T[] {
  return wanted > 0 && wanted < train.length ? new Rng(seed).fork('demonstrations').sample(train, wanted) : train;
}
