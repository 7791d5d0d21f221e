import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { mostPromisingTasks } from '../activities/campaign/mostPromisingTasks';

interface Task {
  id: string;
  template: string;
  value: number;
}
const choose = (tasks: Task[], limit: number) => mostPromisingTasks(tasks, { limit, value: (t) => t.value, template: (t) => t.template }).map((t) => t.id);

describe('mostPromisingTasks', () => {
  test("takes every template's best task before any template's second, by value, and keeps candidate order", () => {
    const tasks: Task[] = [
      { id: 'a1', template: 'a', value: 0.7 },
      { id: 'b1', template: 'b', value: 0.2 },
      { id: 'a2', template: 'a', value: 0.6 },
      { id: 'c1', template: 'c', value: 0.4 },
      { id: 'a3', template: 'a', value: 0.5 },
      { id: 'b2', template: 'b', value: 0.1 },
    ];
    // Best of each template: a1 0.7, c1 0.4, b1 0.2; then the seconds: a2 0.6, b2 0.1.
    assert.deepEqual(choose(tasks, 2), ['a1', 'c1']);
    assert.deepEqual(choose(tasks, 3), ['a1', 'b1', 'c1']);
    assert.deepEqual(choose(tasks, 4), ['a1', 'b1', 'a2', 'c1']);
  });

  test('ties keep candidate order, and a limit at or above the count keeps everything', () => {
    const tasks: Task[] = ['x', 'y', 'z'].map((id) => ({ id, template: id, value: 0.3 }));
    assert.deepEqual(choose(tasks, 2), ['x', 'y']);
    assert.deepEqual(choose(tasks, 3), ['x', 'y', 'z']);
    assert.deepEqual(choose([], 5), []);
  });
});
