import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { mostPromisingTasks, taskTemplate } from '../activities/campaign/mostPromisingTasks';

interface Task {
  id: string;
  template: string;
  value: number;
}
const choose = (tasks: Task[], limit: number) => mostPromisingTasks(tasks, { limit, value: (t) => t.value, template: (t) => t.template }).map((t) => t.id);

describe('mostPromisingTasks', () => {
  test('gives each template its share of the limit, its highest-valued tasks first, and keeps candidate order', () => {
    const tasks: Task[] = [
      { id: 'a1', template: 'a', value: 0.7 },
      { id: 'b1', template: 'b', value: 0.2 },
      { id: 'a2', template: 'a', value: 0.6 },
      { id: 'c1', template: 'c', value: 0.4 },
      { id: 'a3', template: 'a', value: 0.5 },
      { id: 'b2', template: 'b', value: 0.1 },
    ];
    // Shares of 2: a 1, b 2/3, c 1/3; the seat left goes to the larger remainder, b.
    assert.deepEqual(choose(tasks, 2), ['a1', 'b1']);
    // Shares of 3: a 1.5, b 1, c 0.5; the remainders tie, and a's next task (0.6) beats c's (0.4).
    assert.deepEqual(choose(tasks, 3), ['a1', 'b1', 'a2']);
    // Shares of 4: a 2, b 4/3, c 2/3: c's remainder is the larger.
    assert.deepEqual(choose(tasks, 4), ['a1', 'b1', 'a2', 'c1']);
  });

  test("keeps the curriculum's mix: the seventh bench run's phase-1 candidates", () => {
    const of = (template: string, count: number) => Array.from({ length: count }, (_, i) => ({ id: `${template}-${i}`, template, value: 0.4 }));
    const chosen = choose([...of('click-button', 16), ...of('click-link', 13), ...of('enter-text', 3)], 16);
    const count = (template: string) => chosen.filter((id) => id.startsWith(template)).length;
    // 16 x 16/32 = 8, 16 x 13/32 = 6.5, 16 x 3/32 = 1.5: the seat left goes to the first in candidate order.
    assert.deepEqual([count('click-button'), count('click-link'), count('enter-text')], [8, 7, 1]);
  });

  test('ties keep candidate order, and a limit at or above the count keeps everything', () => {
    const tasks: Task[] = ['x', 'y', 'z'].map((id) => ({ id, template: id, value: 0.3 }));
    assert.deepEqual(choose(tasks, 2), ['x', 'y']);
    assert.deepEqual(choose(tasks, 3), ['x', 'y', 'z']);
    assert.deepEqual(choose([], 5), []);
  });

  test("a task's template is its intent_template_id, else its intent_template (a MiniWoB++ type), else the task", () => {
    assert.equal(taskTemplate({ task_id: 1, intent_template_id: 7, intent_template: 'Buy {{x}}' }), 'template-7');
    assert.equal(taskTemplate({ task_id: 2, intent_template: 'click-link' }), 'text-click-link');
    assert.equal(taskTemplate({ task_id: 3, intent_template: '' }), 'task-3');
    // Over MiniWoB++ types: two focus-text tasks valued highest do not crowd out the click types.
    const tasks = [
      { task_id: 1, intent_template: 'focus-text', value: 0.7 },
      { task_id: 2, intent_template: 'focus-text', value: 0.7 },
      { task_id: 3, intent_template: 'click-link', value: 0.55 },
      { task_id: 4, intent_template: 'click-button', value: 0.6 },
    ];
    const chosen = mostPromisingTasks(tasks, { limit: 3, value: (t) => t.value, template: taskTemplate }).map((t) => t.task_id);
    assert.deepEqual(chosen, [1, 3, 4]);
  });
});
