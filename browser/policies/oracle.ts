/**
 * Replays a task's oracle plan (`OracleStep`s). Each step's ElementMatcher is resolved against the
 * current observation's elements at run time, and the step is emitted as a WebRL-grammar string with an
 * `# Element:` comment, as the released checkpoints write them. Step i of the plan answers round i (a step
 * that repeats `until` an element shows answers as many rounds as it takes, oraclePlan.ts); once the plan
 * is spent the oracle exits with an empty answer.
 */
import type { Action, ElementMatcher, Observation, ObservedElement, OracleStep } from '../contract';
import { formatAction } from '../grammar';
import { argumentOf, idsAfterText, nextPlanStep, printedLabels } from './oraclePlan';
import { buildPrompt } from './prompt';
import { PolicyError, type Policy, type PolicyInput, type PolicyOutput } from './policy';

const collapse = (text: string) => text.replace(/\s+/g, ' ').trim();

/**
 * Whether an element satisfies every field the matcher gives. `text` equals the element's own text or
 * its full text; `textIncludes` is a case-insensitive substring of the full text; attributes compare raw.
 */
export function matchesElement(matcher: ElementMatcher, element: ObservedElement): boolean {
  const fullText = element.fullText ?? element.text;
  if (matcher.tag !== undefined && matcher.tag.toLowerCase() !== element.tag) return false;
  if (matcher.text !== undefined) {
    const wanted = collapse(matcher.text);
    if (wanted !== element.text && wanted !== fullText) return false;
  }
  if (matcher.textIncludes !== undefined && !fullText.toLowerCase().includes(collapse(matcher.textIncludes).toLowerCase())) {
    return false;
  }
  if (matcher.textMatches !== undefined && !new RegExp(matcher.textMatches).test(fullText)) return false;
  if (matcher.enabled && element.attributes.disabled !== undefined) return false;
  return Object.entries(matcher.attributes ?? {}).every(([name, value]) => element.attributes[name] === value);
}

/** The id of the `nth` (default first) element matching, in document order; undefined when none does. `after` and `label` need the observation's html. */
export function resolveMatcher(matcher: ElementMatcher, elements: readonly ObservedElement[], html = ''): number | undefined {
  const after = matcher.after === undefined ? undefined : idsAfterText(html, matcher.after);
  const labels = matcher.label === undefined ? undefined : printedLabels(html);
  const printed = (element: ObservedElement) => (!after || after.has(element.id)) && (!labels || labels.get(element.id) === matcher.label);
  return elements.filter((element) => matchesElement(matcher, element) && printed(element))[matcher.nth ?? 0]?.id;
}

function describe(element: ObservedElement): string {
  const label = element.fullText || element.attributes.placeholder || element.attributes['aria-label'] || '';
  return label ? `the '${label.slice(0, 60)}' ${element.tag}` : `the ${element.tag} element ${element.id}`;
}

function actionFor(step: OracleStep, observation: Observation): { action: Action; comment?: string } {
  if (!('target' in step)) {
    return { action: step.action === 'exit' ? { kind: 'exit', message: step.message } : { kind: step.action } };
  }
  const { elements } = observation;
  const id = resolveMatcher(step.target, elements, observation.html);
  const element = elements.find((e) => e.id === id);
  if (id === undefined || !element) {
    throw new PolicyError(`oracle step ${step.action}: no element matches ${JSON.stringify(step.target)}`);
  }
  const comment = `# Element: ${describe(element)}`;
  if (!('argument' in step)) return { action: { kind: step.action, element: id }, comment };
  const argument = argumentOf(step, observation);
  if (argument === undefined) throw new PolicyError(`oracle step ${step.action}: the page's text does not match ${step.argumentFrom}`);
  return { action: { kind: step.action, element: id, argument }, comment };
}

export function createOraclePolicy(): Policy {
  return {
    name: 'oracle',
    async act({ task, observation, history }: PolicyInput): Promise<PolicyOutput> {
      if (!task.oracle) throw new PolicyError(`task ${task.task_id} has no oracle plan`);
      const resolves = (matcher: ElementMatcher) => resolveMatcher(matcher, observation.elements, observation.html) !== undefined;
      const step: OracleStep = nextPlanStep(task.oracle, history, resolves) ?? { action: 'exit', message: '' };
      const { action, comment } = actionFor(step, observation);
      const response = comment ? `${comment}\n${formatAction(action)}` : formatAction(action);
      const prompt = buildPrompt(
        task.intent,
        history.map((h) => h.response),
        observation.html,
      );
      return { response, prompt };
    },
  };
}
