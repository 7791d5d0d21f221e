/**
 * The held-out tasks a campaign evaluates every phase on: the whole test split, or (`testTasks` > 0) a
 * sample of it fixed by the campaign seed, so every phase, and anything that scores the same campaign's
 * test tasks from outside it (bench:learning's zero-shot run), meets the same tasks.
 */
import { Rng } from '../random';

export function heldOutTasks<T>(test: readonly T[], testTasks: number, campaignSeed: number): T[] {
  return testTasks > 0 && testTasks < test.length ? new Rng(campaignSeed).fork('test-sample').sample(test, testTasks) : [...test];
}
