/**
 * The parts of an oracle plan that read the page as it is when the step runs, not as it was when the
 * plan was written: a step that repeats `until` an element shows (paging through a contact book), an
 * argument read from the page's text (a file name a command printed), and a matcher for the element
 * that comes `after` a given text (the link after "Address:") or that the page names by its icon's
 * `label`. The plan stays data (it is stored with
 * its task); these rules are how the oracle policy reads it.
 */
import type { ElementMatcher, Observation, OracleStep } from '../contract';
import type { HistoryRound } from './policy';

const decode = (text: string) =>
  text
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&');

/** A piece of the printed observation: a text run, or the opening tag of an element with an id (its printed attributes raw). */
export type PrintedToken = { text: string } | { id: number; tag: string; attributes: string };

/** The observation's text runs and elements with ids, in print order. */
export function printedTokens(html: string): PrintedToken[] {
  const tokens: PrintedToken[] = [];
  for (const token of html.split(/(<[^>]*>)/)) {
    const element = /^<(\w+) id="(\d+)"(.*)>$/.exec(token);
    if (element) tokens.push({ id: Number(element[2]), tag: element[1]!, attributes: element[3]! });
    else if (!token.startsWith('<') && token.trim()) tokens.push({ text: decode(token).replace(/\s+/g, ' ').trim() });
  }
  return tokens;
}

/** The ids the observation prints after its first text run equal to `text`, in order; none when no run is. */
export function idsAfterText(html: string, text: string): Set<number> {
  const tokens = printedTokens(html);
  const start = tokens.findIndex((t) => 'text' in t && t.text === text.trim());
  return new Set(start < 0 ? [] : tokens.slice(start).flatMap((t) => ('id' in t ? [t.id] : [])));
}

/** The names the observation prints for elements without text of their own, by id: `data-label` (default profile) or `title` (webrl). */
export function printedLabels(html: string): Map<number, string> {
  const labels = new Map<number, string>();
  for (const token of printedTokens(html)) {
    const label = 'id' in token ? /(?:^| )(?:data-label|title)="([^"]*)"/.exec(token.attributes)?.[1] : undefined;
    if ('id' in token && label !== undefined) labels.set(token.id, decode(label));
  }
  return labels;
}

/** The observation's text as one string, runs joined by single spaces (what `argumentFrom` reads). */
export function pageText(html: string): string {
  return printedTokens(html)
    .flatMap((t) => ('text' in t ? [t.text] : []))
    .join(' ');
}

/** The step's argument with `$1` replaced by the first group of its `argumentFrom` over the page's text; undefined when it does not match. */
export function argumentOf(step: { argument: string; argumentFrom?: string }, observation: Observation): string | undefined {
  if (step.argumentFrom === undefined) return step.argument;
  const group = new RegExp(step.argumentFrom).exec(pageText(observation.html))?.[1];
  return group === undefined ? undefined : step.argument.replace(/\$1/g, group);
}

/** Where a plan stands in one episode: the rounds answered so far and the step to answer next. */
interface Cursor {
  rounds: number;
  step: number;
}

// One cursor per episode, keyed by the episode loop's history array (the same array every round). A
// history the policy has not seen (a caller that copies it) falls back to step i answering round i,
// which is exact for plans without repeating steps.
const cursors = new WeakMap<readonly HistoryRound[], Cursor>();

/**
 * The plan's step for this round: steps whose `until` matcher already resolves are done (skipped), a
 * step with `until` is answered again each round until it does, any other step once. Undefined once the
 * plan is spent. `resolves` says whether a matcher finds an element in the current observation.
 */
export function nextPlanStep(
  plan: readonly OracleStep[],
  history: readonly HistoryRound[],
  resolves: (matcher: ElementMatcher) => boolean,
): OracleStep | undefined {
  const known = cursors.get(history);
  let step = known && known.rounds === history.length ? known.step : history.length;
  for (let next = plan[step]; next && 'until' in next && next.until && resolves(next.until); next = plan[step]) step++;
  const chosen = plan[step];
  cursors.set(history, { rounds: history.length + 1, step: chosen && 'until' in chosen && chosen.until ? step : step + 1 });
  return chosen;
}
