/**
 * Replays a task's oracle plan (`OracleStep`s). Each step's ElementMatcher is resolved against the
 * current observation's elements at run time, and the step is emitted as a WebRL-grammar string with an
 * `# Element:` comment, as the released checkpoints write them. Step i of the plan answers round i (a step
 * that repeats `until` an element shows answers as many rounds as it takes, oraclePlan.ts); once the plan
 * is spent the oracle exits with an empty answer. A `solve` step hands the rest of the episode to a step
 * solver, asked at each round with the current observation (plans that depend on what the page shows
 * after a step: a guess's feedback, a tab's content).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Action, ElementMatcher, Observation, ObservedElement, OracleStep } from '../contract';
import { formatAction } from '../grammar';
import { argumentOf, idsAfterText, nextPlanStep, printedLabels } from './oraclePlan';
import { buildPrompt } from './prompt';
import { PolicyError, type HistoryRound, type Policy, type PolicyInput, type PolicyOutput } from './policy';

/** A step solver's answer: the next step; `afterPreviousMs` holds it back until that long after the previous round's answer (a task that says how long to wait), `last` ends the plan after it. */
export interface SolvedStep {
  step: OracleStep;
  afterPreviousMs?: number;
  last?: boolean;
}

/**
 * Picks one step from what the page shows now (undefined: it cannot read the page). `memory` is the
 * episode's own, for what earlier pages showed (a list read a screen at a time).
 */
export type StepSolver = (input: {
  intent: string;
  observation: Observation;
  history: readonly HistoryRound[];
  memory: Record<string, unknown>;
}) => SolvedStep | undefined;

const STEP_SOLVERS = new Map<string, StepSolver>();

/** Makes a step solver available to `solve` steps under `name` (a backend registers its own as its module loads). */
export function registerStepSolver(name: string, solver: StepSolver): void {
  if (STEP_SOLVERS.has(name)) throw new Error(`a step solver named ${name} is registered already`);
  STEP_SOLVERS.set(name, solver);
}

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
  if (step.action === 'solve') throw new PolicyError(`step solver ${step.solver} answered with another solve step`);
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

/** The episode loop ends an episode at its fifth identical action in a row (EpisodeOptions.maxRepeatedActions). */
const MOST_REPEATS = 4;

/** Whether the last rounds all did `same` as many times in a row as the episode loop allows. */
export function atRepeatLimit(history: readonly HistoryRound[], same: (action: Action) => boolean): boolean {
  const last = history.slice(-MOST_REPEATS);
  return last.length === MOST_REPEATS && last.every((round) => round.action !== null && same(round.action));
}

/**
 * A step that repeats `until` an element shows may need more rounds than the loop allows one action in a
 * row (a long box scrolled a share of its height at a time): at the limit it hovers the page's first
 * element once instead, and takes the step again the round after.
 */
function paceRepeats(
  step: OracleStep,
  chosen: { action: Action; comment?: string },
  observation: Observation,
  history: readonly HistoryRound[],
): { action: Action; comment?: string } {
  const first = observation.elements[0];
  if (!('until' in step) || !step.until || !first) return chosen;
  const same = formatAction(chosen.action);
  return atRepeatLimit(history, (action) => formatAction(action) === same)
    ? { action: { kind: 'Hover', element: first.id }, comment: `# Element: ${describe(first)}` }
    : chosen;
}

/** Where an episode's solver stands; keyed by the episode's history array, which the episode loop keeps for the whole episode. */
interface SolverState {
  answeredAt: number;
  finished: boolean;
  memory: Record<string, unknown>;
}

export function createOraclePolicy(): Policy {
  const states = new WeakMap<readonly HistoryRound[], SolverState>();

  async function nextStep(
    plan: OracleStep[],
    { task, observation, history, signal }: PolicyInput,
    state: SolverState,
    resolves: (matcher: ElementMatcher) => boolean,
  ): Promise<OracleStep> {
    const solveAt = plan.findIndex((step) => step.action === 'solve');
    if (solveAt === -1 || history.length < solveAt) return nextPlanStep(plan, history, resolves) ?? { action: 'exit', message: '' };
    const name = (plan[solveAt] as { solver: string }).solver;
    if (state.finished) return { action: 'exit', message: '' };
    const solver = STEP_SOLVERS.get(name);
    if (!solver) throw new PolicyError(`no step solver named ${name} (the backend that registers it is not loaded)`);
    const solved = solver({ intent: task.intent, observation, history, memory: state.memory });
    if (!solved) throw new PolicyError(`step solver ${name} found no step on the page of task ${task.task_id}`);
    const waitMs = state.answeredAt + (solved.afterPreviousMs ?? 0) - performance.now();
    if (waitMs > 0) await sleep(waitMs, undefined, { signal });
    state.finished = solved.last === true;
    return solved.step;
  }

  return {
    name: 'oracle',
    async act(input: PolicyInput): Promise<PolicyOutput> {
      const { task, observation, history } = input;
      if (!task.oracle) throw new PolicyError(`task ${task.task_id} has no oracle plan`);
      const resolves = (matcher: ElementMatcher) => resolveMatcher(matcher, observation.elements, observation.html) !== undefined;
      const state = states.get(history) ?? { answeredAt: Number.NaN, finished: false, memory: {} };
      states.set(history, state);
      const step = await nextStep(task.oracle, input, state, resolves);
      const { action, comment } = paceRepeats(step, actionFor(step, observation), observation, history);
      const response = comment ? `${comment}\n${formatAction(action)}` : formatAction(action);
      const prompt = buildPrompt(
        task.intent,
        history.map((h) => h.response),
        observation.html,
      );
      state.answeredAt = performance.now();
      return { response, prompt };
    },
  };
}
