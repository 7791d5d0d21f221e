/**
 * Which in-band tasks a phase rolls out when the critic filter keeps more of them than the phase may
 * take: the most promising first (highest critic value), one template at a time, so that the phase
 * holds each template's best task before any template's second one.
 *
 * Why by value and not a random sample: on bench:campaign seed 1, 360 tasks evolved from the SFT
 * actor's failures were all rolled out. The evaluator's success rate rose with the critic value at
 * the start page (4% below 0.05, 9% in [0.05, 0.2), 25% in [0.2, 0.4), 33% in [0.4, 0.6), 60% in
 * [0.6, 0.75]), so a random 90 of the in-band tasks would have held 22 successes, and these 90 held
 * 28, over 27 templates. The actor's update learns only from rewarded trajectories, so the phase
 * wastes fewer rollouts. The band's upper edge still drops the tasks the actor already masters.
 * Deterministic: ties keep candidate order. The chosen tasks come back in candidate order.
 */
export function mostPromisingTasks<T>(tasks: readonly T[], options: { limit: number; value: (task: T) => number; template: (task: T) => string }): T[] {
  if (tasks.length <= options.limit) return [...tasks];
  const byValue = tasks.map((task, index) => ({ task, index, value: options.value(task) })).sort((a, b) => b.value - a.value || a.index - b.index);
  // Rank of each task within its template (0 = the template's best), then value across templates.
  const seen = new Map<string, number>();
  const ranked = byValue.map((entry) => {
    const template = options.template(entry.task);
    const rank = seen.get(template) ?? 0;
    seen.set(template, rank + 1);
    return { ...entry, rank };
  });
  ranked.sort((a, b) => a.rank - b.rank || b.value - a.value || a.index - b.index);
  const chosen = new Set(ranked.slice(0, options.limit).map((entry) => entry.index));
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
