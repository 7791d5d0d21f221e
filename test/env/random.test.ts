/**
 * The stratified sample phase 0's probe draws from the train split: every template gets its share, so
 * the curriculum (which evolves only from what the probe failed) can reach every template.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Rng } from '../../env/random';
import { taskTemplate } from '../../activities/campaign/mostPromisingTasks';

/** bench:learning's train split: 64 seeds of each of four MiniWoB++ types, in split order. */
const TYPES = ['click-button', 'click-link', 'enter-text', 'focus-text'];
const TRAIN = TYPES.flatMap((type, t) => Array.from({ length: 64 }, (_, seed) => ({ task_id: t * 64 + seed, intent_template: type })));

function perTemplate(tasks: readonly { task_id: number; intent_template: string }[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const task of tasks) counts.set(taskTemplate(task), (counts.get(taskTemplate(task)) ?? 0) + 1);
  return counts;
}

describe('Rng.stratifiedSample', () => {
  test('a probe of 16 from four types of 64 takes 4 of each, for every seed', () => {
    for (let seed = 1; seed <= 50; seed++) {
      const probe = new Rng(seed).stratifiedSample(TRAIN, 16, taskTemplate);
      assert.equal(new Set(probe.map((t) => t.task_id)).size, 16, 'no task twice');
      assert.deepEqual([...perTemplate(probe).values()], [4, 4, 4, 4], `seed ${seed}`);
    }
  });

  test('shares differ by at most one when the count does not divide, and which template gets one more is drawn', () => {
    const extra = new Set<string>();
    for (let seed = 1; seed <= 20; seed++) {
      const counts = perTemplate(new Rng(seed).stratifiedSample(TRAIN, 6, taskTemplate));
      assert.equal(counts.size, 4);
      assert.deepEqual([...counts.values()].sort(), [1, 1, 2, 2]);
      for (const [template, n] of counts) if (n === 2) extra.add(template);
    }
    assert.equal(extra.size, 4, 'every template is sometimes one of those with more');
  });

  test('a spent template leaves its share to the others, and a count past the items takes them all', () => {
    const uneven = [...TRAIN.slice(0, 2), ...TRAIN.slice(64, 128)];
    assert.deepEqual([...perTemplate(new Rng(3).stratifiedSample(uneven, 10, taskTemplate)).values()].sort(), [2, 8]);
    assert.equal(new Rng(3).stratifiedSample(uneven, 100, taskTemplate).length, 66);
  });

  test('is the same sample for the same seed and items, and another for another seed', () => {
    const ids = (seed: number) => new Rng(seed).stratifiedSample(TRAIN, 16, taskTemplate).map((t) => t.task_id);
    assert.deepEqual(ids(7), ids(7));
    assert.notDeepEqual(ids(7), ids(8));
  });
});
