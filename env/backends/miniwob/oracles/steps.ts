/** The steps MiniWoB++'s oracle solvers build plans from (solver.ts has the solver's signature). */
import type { ElementMatcher, OracleStep } from '../../../../browser/contract';

export const quoted = (intent: string): string[] => Array.from(intent.matchAll(/"([^"]*)"/g), (m) => m[1]!);
export const click = (target: ElementMatcher): OracleStep => ({ action: 'Click', target });
export const type = (target: ElementMatcher, argument: string): OracleStep => ({ action: 'Type', target, argument });
export const submit = click({ tag: 'button', text: 'Submit' });

/** Every step, or no plan when one of them found no element. */
export function plan(...steps: (OracleStep | undefined)[]): OracleStep[] | undefined {
  return steps.every((step): step is OracleStep => step !== undefined) ? steps : undefined;
}

export const clickOn = (target: ElementMatcher | undefined): OracleStep | undefined => (target ? click(target) : undefined);
