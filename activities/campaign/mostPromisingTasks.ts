/**
 * Which in-band tasks a phase rolls out when the critic filter keeps more of them than the phase may
 * take: each template gets its share of the phase in proportion to its share of the in-band tasks
 * (largest remainders; a tie goes to the template whose next task is valued higher), and within a
 * template the most promising go first (highest critic value).
 *
 * Why in proportion: the candidates' mix is the curriculum's choice. MiniWoB++'s draws give at most a
 * quarter of a phase to types the actor never solved (env/backends/miniwob/evolve.ts); an equal share
 * per template undid that: on bench:learning's seventh run (seed 1, phase 1) 32 candidates of which
 * 16 were click-button (the one type the probe half-solved) became 6 click-button tasks of 16, beside 7
 * click-link and 3 enter-text ones (no probe success among 10).
 *
 * Why by value within a template and not a random sample: on bench:campaign seed 1, 360 tasks evolved
 * from the SFT actor's failures were all rolled out. The evaluator's success rate rose with the critic
 * value at the start page (4% below 0.05, 9% in [0.05, 0.2), 25% in [0.2, 0.4), 33% in [0.4, 0.6), 60%
 * in [0.6, 0.75]), so the higher-valued tasks hold more of the successes the actor's update learns
 * from. The band's upper edge still drops the tasks the actor already masters. Deterministic: ties keep
 * candidate order. The chosen tasks come back in candidate order.
 */
export function mostPromisingTasks<T>(tasks: readonly T[], options: { limit: number; value: (task: T) => number; template: (task: T) => string }): T[] {
  if (tasks.length <= options.limit) return [...tasks];
  const byTemplate = new Map<string, { index: number; value: number }[]>();
  tasks.forEach((task, index) => {
    const template = options.template(task);
    byTemplate.set(template, [...(byTemplate.get(template) ?? []), { index, value: options.value(task) }]);
  });
  // A template's share is limit x its count / all; in integers, so that equal remainders compare equal.
  const groups = [...byTemplate.values()].map((entries) => ({
    ranked: entries.sort((a, b) => b.value - a.value || a.index - b.index),
    seats: Math.floor((options.limit * entries.length) / tasks.length),
    remainder: (options.limit * entries.length) % tasks.length,
  }));
  const left = options.limit - groups.reduce((sum, group) => sum + group.seats, 0);
  const nextValue = (group: (typeof groups)[number]) => group.ranked[group.seats]!.value;
  // Stable: equal remainders and values keep the templates' order of first appearance.
  const byRemainder = [...groups].sort((a, b) => b.remainder - a.remainder || nextValue(b) - nextValue(a));
  for (const group of byRemainder.slice(0, left)) group.seats++;
  const chosen = new Set(groups.flatMap((group) => group.ranked.slice(0, group.seats).map((entry) => entry.index)));
  return tasks.filter((_, index) => chosen.has(index));
}

/**
 * The template a task was made from, for spreading a phase over templates: its `intent_template_id`, else
 * its `intent_template` (a MiniWoB++ task's type, which has no id), else the task alone.
 *
 * Why the text too: on bench:learning's fifth run (seed 1, phase 1) each MiniWoB++ task was a template
 * of its own, so the 16 highest-valued of 32 in-band candidates were all 7 focus-text tasks (5 of their
 * rollouts succeeded) and 1 of the 16 click-link ones: the phase went to the type the actor knew best.
 */
export function taskTemplate(task: { task_id: number | string; intent_template_id?: number; intent_template?: string }): string {
  if (task.intent_template_id !== undefined) return `template-${task.intent_template_id}`;
  if (task.intent_template) return `text-${task.intent_template}`;
  return `task-${task.task_id}`;
}
