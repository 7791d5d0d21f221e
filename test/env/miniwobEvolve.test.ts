/**
 * The curriculum over MiniWoB++ (env/backends/miniwob/evolve.ts) on a train split loaded from the real
 * pages: new tasks draw task types in proportion to the failed tasks of each type, at most a quarter of
 * them of types the actor never solved while it half-knows others, seeds from the train range only, the
 * intents the task source read from the seeded pages, and the same tasks for the same seed.
 */
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { backend, miniwobSplit } from '../../env/backends/miniwob';
import { evolveMiniwobTasks, miniwobRefOf, tasksByType, UNSOLVED_SHARE } from '../../env/backends/miniwob/evolve';
import { miniwobSettings, type MiniwobSettings } from '../../env/backends/miniwob/settings';
import type { EnvironmentTask } from '../../env/backends/contract';

const TYPES = ['click-button', 'enter-text', 'click-test'];
const TRAIN = { from: 0, to: 16 };

describe('miniwob curriculum', () => {
  let settings: MiniwobSettings;
  let train: EnvironmentTask[];
  let failed: EnvironmentTask[];

  const ofType = (type: string) => train.filter((t) => miniwobRefOf(t)?.type === type);
  const request = (seed: number, count: number, failures = failed, solved?: EnvironmentTask[]) => ({
    failed: failures,
    ...(solved ? { solved } : {}),
    knownIntents: new Set(train.map((t) => t.intent)),
    count,
    seed,
    firstTaskId: 5000,
  });

  before(async () => {
    settings = miniwobSettings.parse({ backend: 'miniwob', miniwob: { taskTypes: TYPES, seeds: { train: TRAIN, test: { from: 1000, to: 1002 } } } });
    train = await miniwobSplit(settings, 'train');
    // Six failures of click-button, two of enter-text, none of click-test.
    failed = [...ofType('click-button').slice(0, 6), ...ofType('enter-text').slice(0, 2)];
  });

  test('task types are drawn in proportion to their failures; a type never failed is never drawn', () => {
    assert.deepEqual(
      tasksByType(failed, TYPES),
      new Map([
        ['click-button', 6],
        ['enter-text', 2],
      ]),
    );
    const drawn = new Map<string, number>();
    for (let seed = 0; seed < 60; seed++) {
      for (const task of evolveMiniwobTasks({ types: TYPES, seeds: TRAIN, train, request: request(seed, 4) })) {
        const type = miniwobRefOf(task)!.type;
        drawn.set(type, (drawn.get(type) ?? 0) + 1);
      }
    }
    const total = [...drawn.values()].reduce((a, b) => a + b, 0);
    assert.equal(total, 240);
    assert.equal(drawn.get('click-test'), undefined);
    const share = (drawn.get('click-button') ?? 0) / total;
    assert.ok(share > 0.65 && share < 0.85, `click-button drew ${share.toFixed(2)} of the new tasks, its failures are 0.75`);
  });

  test('types the actor half-knows take at least three quarters of every prefix; unsolved ones the rest, or all once none is left', () => {
    // enter-text failed 10 times and was never solved; click-button failed twice and was solved twice.
    const failures = [...ofType('enter-text').slice(0, 10), ...ofType('click-button').slice(0, 2)];
    const solved = ofType('click-button').slice(2, 4);
    const typeOf = (task: EnvironmentTask) => miniwobRefOf(task)!.type;
    let unsolved = 0;
    let drawn = 0;
    for (let seed = 0; seed < 40; seed++) {
      const created = evolveMiniwobTasks({ types: TYPES, seeds: TRAIN, train, request: request(seed, 8, failures, solved) });
      assert.equal(created.length, 8);
      created.forEach((_, n) => {
        const prefix = created.slice(0, n + 1).filter((t) => typeOf(t) === 'enter-text').length;
        assert.ok(prefix <= Math.floor((n + 1) * UNSOLVED_SHARE), `seed ${seed}: ${prefix} unsolved in the first ${n + 1}`);
      });
      unsolved += created.filter((t) => typeOf(t) === 'enter-text').length;
      drawn += created.length;
      assert.ok(!created.some((t) => typeOf(t) === 'click-test'), 'a type never failed is never drawn');
    }
    // By failures alone enter-text would take 10/12 of the draws; the cap holds it near a quarter.
    assert.ok(unsolved / drawn > 0.2 && unsolved / drawn <= UNSOLVED_SHARE, `enter-text drew ${unsolved} of ${drawn}`);
    const byFailuresAlone = evolveMiniwobTasks({ types: TYPES, seeds: TRAIN, train, request: request(5, 8, failures) });
    assert.ok(byFailuresAlone.filter((t) => typeOf(t) === 'enter-text').length > 2, 'without the solved tasks, failures alone weigh the types');
    // click-button has 16 train instances: once they are drawn, enter-text takes the rest rather than the phase stopping.
    const long = evolveMiniwobTasks({ types: TYPES, seeds: TRAIN, train, request: request(5, 24, failures, solved) });
    assert.equal(long.length, 24);
    assert.equal(long.filter((t) => typeOf(t) === 'click-button').length, 16);
    // Nothing solved: every failed type is unsolved, and the draw is the failures' alone.
    assert.deepEqual(evolveMiniwobTasks({ types: TYPES, seeds: TRAIN, train, request: request(5, 8, failures, []) }), byFailuresAlone);
    // Seeded: the same request gives the same tasks.
    assert.deepEqual(
      evolveMiniwobTasks({ types: TYPES, seeds: TRAIN, train, request: request(9, 8, failures, solved) }),
      evolveMiniwobTasks({ types: TYPES, seeds: TRAIN, train, request: request(9, 8, failures, solved) }),
    );
  });

  test('new tasks are train instances with the intents read from their seeded pages, never a failed one while others are left', () => {
    const failedIds = new Set(failed.map((t) => t.task_id));
    const created = evolveMiniwobTasks({ types: TYPES, seeds: TRAIN, train, request: request(3, 12) });
    assert.equal(created.length, 12);
    assert.deepEqual(
      created.map((t) => t.task_id),
      Array.from({ length: 12 }, (_, i) => 5000 + i),
    );
    const byId = new Map(train.map((t) => [t.task_id, t]));
    for (const task of created) {
      const ref = miniwobRefOf(task)!;
      assert.ok(ref.seed >= TRAIN.from && ref.seed < TRAIN.to, `seed ${ref.seed} is outside the train range`);
      const source = byId.get(String(task.evolved_from));
      assert.ok(source, `${String(task.evolved_from)} is not a train task`);
      assert.equal(task.intent, source.intent);
      assert.equal(task.start_url, source.start_url);
      assert.ok(!failedIds.has(source.task_id), `${source.task_id} failed and other instances were left`);
    }
    assert.equal(new Set(created.map((t) => t.evolved_from)).size, created.length, 'no instance twice');
  });

  test('failures on test seeds still draw train seeds; a type out of instances falls back to its failed ones, then stops', () => {
    const testTask = { ...ofType('enter-text')[0]!, task_id: 'miniwob:enter-text:1000', start_url: '__MINIWOB__/enter-text.html?seed=1000' };
    const created = evolveMiniwobTasks({ types: TYPES, seeds: TRAIN, train, request: request(1, 40, [testTask, ...ofType('click-test')]) });
    const seeds = created.map((t) => miniwobRefOf(t)!.seed);
    assert.ok(
      seeds.every((s) => s >= TRAIN.from && s < TRAIN.to),
      `seeds ${seeds.join(',')}`,
    );
    // enter-text has 16 fresh train instances; click-test failed on all 16 and offers them again: 32 in all.
    assert.equal(created.length, 32);
    assert.deepEqual(evolveMiniwobTasks({ types: TYPES, seeds: TRAIN, train, request: request(1, 4, []) }), []);
  });

  test('the same seed and failures give the same tasks; another seed other tasks; the backend draws from the loaded split', () => {
    const a = evolveMiniwobTasks({ types: TYPES, seeds: TRAIN, train, request: request(11, 6) });
    assert.deepEqual(evolveMiniwobTasks({ types: TYPES, seeds: TRAIN, train, request: request(11, 6) }), a);
    assert.notDeepEqual(evolveMiniwobTasks({ types: TYPES, seeds: TRAIN, train, request: request(12, 6) }), a);
    assert.deepEqual(backend.evolve!(settings, request(11, 6)), a);
    const unloaded = miniwobSettings.parse({ backend: 'miniwob', miniwob: { taskTypes: ['click-link'] } });
    assert.throws(() => backend.evolve!(unloaded, request(11, 6)), /has not loaded/);
  });
});
