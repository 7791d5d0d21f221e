/**
 * What every MiniWoB++ oracle solver shares (oracle.ts registers them): the solver's signature and the
 * matcher that points a plan step at an element of an observation. Kept apart from oracle.ts, which
 * imports the solvers, so that solver files import it without a cycle.
 */
import type { ElementMatcher, Observation, ObservedElement, OracleStep } from '../../../../browser/contract';

/**
 * A task type's solver: the instruction, the start page's observation and, for a page with a scrolling
 * box or document, what each Scroll Down from the start shows (in order, until nothing moves).
 */
export type Solver = (intent: string, observation: Observation, scrolled: readonly Observation[]) => OracleStep[] | undefined;

/** A matcher for the element with observation id `id`: its tag and its place among the elements of that tag. */
export function matcherAt(observation: Observation, id: number): ElementMatcher | undefined {
  const element = observation.elements.find((e) => e.id === id);
  if (!element) return undefined;
  const sameTag = observation.elements.filter((e: ObservedElement) => e.tag === element.tag);
  return { tag: element.tag, nth: sameTag.indexOf(element) };
}
