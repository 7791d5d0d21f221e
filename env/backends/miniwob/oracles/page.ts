/**
 * Reading a MiniWoB++ observation the way an agent reads it (the printed text, the elements with ids and
 * what they show) and writing the step that acts on one of its elements, for the solvers in this folder.
 */
import type { ElementMatcher, Observation, ObservedElement, OracleStep } from '../../../../browser/contract';
import type { HistoryRound } from '../../../../browser/policies/policy';
import { atRepeatLimit, registerStepSolver, type SolvedStep, type StepSolver } from '../../../../browser/policies/oracle';

/** The observation's text as printed: tags dropped, entities decoded, whitespace collapsed. */
export function pageText(observation: Observation): string {
  return observation.html
    .replace(/<[^>]*>/g, ' ')
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
    .trim();
}

/** The elements with tag `tag`, in document order. */
export const elementsOf = (observation: Observation, tag: string): ObservedElement[] => observation.elements.filter((e) => e.tag === tag);

/** The first element of `tag` whose text (own or full) is `text`. */
export function withText(observation: Observation, tag: string, text: string): ObservedElement | undefined {
  return elementsOf(observation, tag).find((e) => e.text === text || e.fullText === text);
}

/** The matcher naming exactly this element of this observation: its tag and its place among that tag's elements. */
function matcherOf(observation: Observation, element: ObservedElement): ElementMatcher {
  return { tag: element.tag, nth: elementsOf(observation, element.tag).indexOf(element) };
}

export const clickOn = (observation: Observation, element: ObservedElement): OracleStep => ({ action: 'Click', target: matcherOf(observation, element) });
export const hoverOn = (observation: Observation, element: ObservedElement): OracleStep => ({ action: 'Hover', target: matcherOf(observation, element) });
export const typeInto = (observation: Observation, element: ObservedElement, text: string): OracleStep => ({
  action: 'Type',
  target: matcherOf(observation, element),
  argument: text,
});

/**
 * Clicks `element`, or hovers it when the last rounds clicked it as many times in a row as the episode loop
 * allows (paging a calendar month by month, generating numbers until one fits).
 */
export function clickAgain(observation: Observation, element: ObservedElement, history: readonly HistoryRound[]): OracleStep {
  const repeated = atRepeatLimit(history, (action) => action.kind === 'Click' && action.element === element.id);
  return repeated ? hoverOn(observation, element) : clickOn(observation, element);
}

/** Scrolls, or hovers the page's first element when the last rounds scrolled the same way as many times in a row as allowed. */
export function scrollAgain(observation: Observation, direction: 'Scroll Down' | 'Scroll Up', history: readonly HistoryRound[]): OracleStep {
  const first = observation.elements[0];
  return first && atRepeatLimit(history, (action) => action.kind === direction) ? hoverOn(observation, first) : { action: direction };
}

/** Text in double quotes in an instruction, in order. */
export const quotedIn = (intent: string): string[] => Array.from(intent.matchAll(/"([^"]*)"/g), (m) => m[1]!);

/** The 1-based position an ordinal names ("1st", "2nd", "3rd", "21th"). */
export function ordinal(text: string | undefined): number | undefined {
  const match = /^(\d+)(?:st|nd|rd|th)$/.exec(text ?? '');
  return match ? Number(match[1]) : undefined;
}

/** A step solver's input. */
export type SolverInput = Parameters<StepSolver>[0];

/**
 * A task type solved step by step: `goal` reads what the instruction asks (no plan when it cannot), `step`
 * picks each step from the page as it is then. Registers the step solver and returns the type's planner,
 * whose plan is the one `solve` step.
 */
export function stepByStep<Goal>(
  type: string,
  goal: (intent: string) => Goal | undefined,
  step: (goal: Goal, input: SolverInput) => SolvedStep | undefined,
): (intent: string) => OracleStep[] | undefined {
  const solver = `miniwob/${type}`;
  registerStepSolver(solver, (input) => {
    const wanted = goal(input.intent);
    return wanted === undefined ? undefined : step(wanted, input);
  });
  return (intent) => (goal(intent) === undefined ? undefined : [{ action: 'solve', solver }]);
}
