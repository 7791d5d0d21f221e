/**
 * The three groups benches split test figures into, by a task's template relative to a campaign's
 * phase 0: "taught" (a demonstration task has it), "untaught" (another train template) and "heldout"
 * (no train task has it). One rule, so bench:campaign and bench:exploration figures compare.
 */
import type { WebArenaTask } from '../env/tasks/schema';

export const TEMPLATE_GROUPS = ['taught', 'untaught', 'heldout'] as const;
export type TemplateGroup = (typeof TEMPLATE_GROUPS)[number];

export function templateGroupOf(train: readonly WebArenaTask[], demonstrated: readonly WebArenaTask[]): (task: WebArenaTask) => TemplateGroup {
  const taught = new Set(demonstrated.map((task) => task.intent_template_id));
  const trained = new Set(train.map((task) => task.intent_template_id));
  return (task) => (taught.has(task.intent_template_id) ? 'taught' : trained.has(task.intent_template_id) ? 'untaught' : 'heldout');
}
