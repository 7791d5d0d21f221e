/**
 * What a task template is: an intent with `{{slots}}`, and a function that lists every
 * instantiation the seeded data supports, each with its reference (from the same queries the pages
 * use) and its oracle solution (derived from the data, never written per task).
 */
import type { ElementMatcher, OracleStep } from '../../browser/contract';
import type { Rng } from '../random';
import type { EmbeddedSiteName } from '../siteUrls';
import type { World } from '../world';
import type { freshStates } from '../world';

/** The eval block of a WebArena task as written to task files. */
export interface EvalSpec {
  eval_types: ('string_match' | 'url_match' | 'program_html')[];
  reference_answers: Record<string, string | string[]> | null;
  reference_url: string;
  url_note?: 'EXACT' | 'GOLD in PRED';
  program_html: { url: string; locator: string; required_contents: Record<string, string | string[]> }[];
  string_note: string;
}

export interface TaskDraft {
  params: Record<string, string | number>;
  /** With a placeholder, e.g. `__SHOPPING__`. */
  startUrl: string;
  eval: EvalSpec;
  oracle: OracleStep[];
}

export interface TemplateContext {
  world: World;
  /** Seed-state views of the sites: what a fresh episode shows. */
  fresh: ReturnType<typeof freshStates>;
  rng: Rng;
}

export interface TaskTemplate {
  /** The `intent_template_id`. */
  id: number;
  site: EmbeddedSiteName;
  intent: string;
  /** Held-out templates appear only in the test split. */
  heldOut?: boolean;
  /**
   * A composed template combines the constraints of two templates on the same site (WebRL's
   * in-breadth evolution); it feeds only the curriculum's task generator, never the splits.
   */
  composes?: readonly [number, number];
  drafts(ctx: TemplateContext): TaskDraft[];
}

export function renderIntent(template: string, params: Record<string, string | number>): string {
  return template.replace(/\{\{(\w+)\}\}/g, (_, key: string) => {
    const value = params[key];
    if (value === undefined) throw new Error(`intent template "${template}" has no value for {{${key}}}`);
    return String(value);
  });
}

// Oracle step builders.
export const click = (target: ElementMatcher): OracleStep => ({ action: 'Click', target });
export const type = (target: ElementMatcher, argument: string): OracleStep => ({ action: 'Type', target, argument });
export const search = (target: ElementMatcher, argument: string): OracleStep => ({ action: 'Search', target, argument });
export const select = (target: ElementMatcher, argument: string): OracleStep => ({ action: 'Select Dropdown Option', target, argument });
export const exit = (message: string): OracleStep => ({ action: 'exit', message });
export const link = (text: string): ElementMatcher => ({ tag: 'a', text });
export const button = (text: string): ElementMatcher => ({ tag: 'button', text });
export const byId = (id: string): ElementMatcher => ({ attributes: { id } });
export const byAttr = (name: string, value: string, tag?: string): ElementMatcher => ({ ...(tag ? { tag } : {}), attributes: { [name]: value } });

/** The message navigation and state-change oracles end with. */
export const DONE = 'Done';

// Eval builders.
export function stringMatch(reference: Record<string, string | string[]>, note = ''): EvalSpec {
  return { eval_types: ['string_match'], reference_answers: reference, reference_url: '', program_html: [], string_note: note };
}

export function urlMatch(url: string): EvalSpec {
  return { eval_types: ['url_match'], reference_answers: null, reference_url: url, url_note: 'GOLD in PRED', program_html: [], string_note: '' };
}

export function programHtml(targets: EvalSpec['program_html'], url?: string): EvalSpec {
  return {
    eval_types: url ? ['url_match', 'program_html'] : ['program_html'],
    reference_answers: null,
    reference_url: url ?? '',
    ...(url ? { url_note: 'GOLD in PRED' as const } : {}),
    program_html: targets,
    string_note: '',
  };
}

/** The option "Select Dropdown Option" picks: the first whose text contains the argument. */
export function firstContaining(options: readonly string[], argument: string): string | undefined {
  const a = argument.toLowerCase();
  return options.find((o) => o.toLowerCase().includes(a));
}

/** Values that "Select Dropdown Option" can pick by their own text. */
export function selectable(options: readonly string[]): string[] {
  return options.filter((o) => firstContaining(options, o) === o);
}

/** Cycles through `items` to pair each of `count` drafts with a value, deterministically. */
export function cycle<T>(items: readonly T[], index: number): T {
  const item = items[index % items.length];
  if (item === undefined) throw new Error('cycle over an empty list');
  return item;
}
