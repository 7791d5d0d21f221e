/**
 * The pieces MiniWoB++'s oracle solvers build plans from: what a solver is, the steps they take, and the
 * matcher for an element of the start page's observation.
 */
import type { ElementMatcher, Observation, ObservedElement, OracleStep } from '../../../../browser/contract';

/** Reads a task's instruction and start page and writes its oracle plan; undefined when it cannot read this instance. */
export type Solver = (intent: string, observation: Observation) => OracleStep[] | undefined;

export const quoted = (intent: string): string[] => Array.from(intent.matchAll(/"([^"]*)"/g), (m) => m[1]!);
export const click = (target: ElementMatcher): OracleStep => ({ action: 'Click', target });
export const type = (target: ElementMatcher, argument: string): OracleStep => ({ action: 'Type', target, argument });
export const submit = click({ tag: 'button', text: 'Submit' });

/** A matcher for the element with observation id `id`: its tag and its place among the elements of that tag. */
export function matcherAt(observation: Observation, id: number): ElementMatcher | undefined {
  const element = observation.elements.find((e) => e.id === id);
  if (!element) return undefined;
  const sameTag = observation.elements.filter((e: ObservedElement) => e.tag === element.tag);
  return { tag: element.tag, nth: sameTag.indexOf(element) };
}

/** Every step, or no plan when one of them found no element. */
export function plan(...steps: (OracleStep | undefined)[]): OracleStep[] | undefined {
  return steps.every((step): step is OracleStep => step !== undefined) ? steps : undefined;
}

export const clickOn = (target: ElementMatcher | undefined): OracleStep | undefined => (target ? click(target) : undefined);
