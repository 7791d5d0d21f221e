/**
 * Builds a task's evaluator from its WebArena config, with WebArena-Lite's semantics: the task's
 * evaluators (string_match, url_match, program_html) each score 0 or 1 and the scores multiply.
 * Building checks everything that can be checked without a browser (helpers, placeholders), so a
 * bad task file fails at load time with the task id and field rather than mid-rollout.
 */
import type { Page } from 'playwright-core';
import { resolvePlaceholders, type SiteUrls } from '../site-urls';
import { TaskConfigError, type ProgramHtmlTarget, type ReferenceAnswers, type RequiredContents, type WebArenaTask } from '../tasks/schema';
import { checkHelperCall, parseHelperCall, runHelperCall, type HelperCall, type HelperContext } from './helpers';
import type { FuzzyJudge } from './judge';
import { exactMatch, mustExclude, mustInclude } from './text-match';

export interface TaskEvaluator {
  /** Scores the final `page` of an episode (in its own browser context) and its `exit` answer. */
  evaluate(page: Page, answer: string | null): Promise<number>;
}

export interface EvaluatorOptions {
  siteUrls: SiteUrls;
  judge: FuzzyJudge;
}

type Check = (page: Page, answer: string) => Promise<boolean>;

/** Deep copy of a task with every site placeholder in every string replaced by its URL. */
export function resolveTaskPlaceholders<T>(value: T, siteUrls: SiteUrls): T {
  if (typeof value === 'string') return resolvePlaceholders(value, siteUrls) as T;
  if (Array.isArray(value)) return value.map((item: unknown) => resolveTaskPlaceholders(item, siteUrls)) as T;
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolveTaskPlaceholders(v, siteUrls)])) as T;
  }
  return value;
}

function cleanUrl(url: string): string {
  const out = url.replaceAll('localhost', '127.0.0.1');
  return out.endsWith('/') ? out.slice(0, -1) : out;
}

async function contentsMatch(
  contents: RequiredContents | ReferenceAnswers,
  value: string,
  intent: string,
  judge: FuzzyJudge,
  unachievableReason: string,
): Promise<boolean> {
  if (contents.exact_match !== undefined && !exactMatch(contents.exact_match, value)) return false;
  if (contents.must_include && !contents.must_include.every((item) => mustInclude(item, value))) return false;
  if (contents.must_exclude && !contents.must_exclude.every((item) => mustExclude(item, value))) return false;
  const fuzzy = contents.fuzzy_match;
  if (fuzzy === 'N/A') {
    if (!exactMatch('N/A', value) && !(await judge.sameUnachievableReason({ intent, reason: unachievableReason, answer: value }))) return false;
  } else if (fuzzy && !(await judge.matches({ intent, reference: fuzzy, answer: value }))) {
    return false;
  }
  return true;
}

function stringMatch(task: WebArenaTask, judge: FuzzyJudge): Check {
  const references = task.eval.reference_answers ?? {};
  return (_page, answer) => contentsMatch(references, answer, task.intent, judge, task.eval.string_note ?? '');
}

function urlMatch(task: WebArenaTask): Check {
  const references = (task.eval.reference_url ?? '').split(' |OR| ').map(cleanUrl);
  const goldInPred = task.eval.url_note === 'GOLD in PRED';
  return async (page) => {
    const current = cleanUrl(page.url());
    return goldInPred ? references.some((ref) => current.includes(ref)) : references.includes(current);
  };
}

/** Evaluates a `document.`-expression in the page; a throwing or missing element reads as ''. */
async function readJs(page: Page, expression: string): Promise<string> {
  const script = `(() => { try { const v = (${expression}); return v === null || v === undefined ? '' : String(v); } catch { return ''; } })()`;
  try {
    return await page.evaluate(script);
  } catch {
    return '';
  }
}

interface CompiledTarget {
  url: { kind: 'last' } | { kind: 'literal'; url: string } | { kind: 'helper'; call: HelperCall };
  locator: { kind: 'html' } | { kind: 'js'; expression: string } | { kind: 'helper'; call: HelperCall };
  prepActions: string[];
  contents: RequiredContents;
}

function compileTarget(task: WebArenaTask, target: ProgramHtmlTarget, index: number): CompiledTarget {
  const field = `eval.program_html[${index}]`;
  const helper = (expression: string, kind: 'url' | 'locator', sub: string): HelperCall => {
    try {
      const call = parseHelperCall(expression.slice('func:'.length));
      checkHelperCall(call, kind);
      return call;
    } catch (error) {
      throw new TaskConfigError(task.task_id, `${field}.${sub}`, (error as Error).message);
    }
  };
  const rawUrl = target.url.trim();
  let url: CompiledTarget['url'];
  if (rawUrl === 'last') url = { kind: 'last' };
  else if (rawUrl.startsWith('func:')) url = { kind: 'helper', call: helper(rawUrl, 'url', 'url') };
  else if (/^https?:\/\//.test(rawUrl)) url = { kind: 'literal', url: rawUrl };
  else throw new TaskConfigError(task.task_id, `${field}.url`, `expected "last", func:helper(...) or an http(s) URL, got "${rawUrl}"`);

  const rawLocator = target.locator.trim();
  let locator: CompiledTarget['locator'];
  if (!rawLocator) locator = { kind: 'html' };
  else if (rawLocator.startsWith('document.') || rawLocator.startsWith('[...document.')) locator = { kind: 'js', expression: rawLocator };
  else if (rawLocator.startsWith('func:')) locator = { kind: 'helper', call: helper(rawLocator, 'locator', 'locator') };
  else throw new TaskConfigError(task.task_id, `${field}.locator`, `expected "", a document. expression or func:helper(...), got "${rawLocator}"`);
  return { url, locator, prepActions: target.prep_actions ?? [], contents: target.required_contents };
}

function programHtml(task: WebArenaTask, options: EvaluatorOptions): Check {
  const targets = (task.eval.program_html ?? []).map((target, i) => compileTarget(task, target, i));
  return async (page) => {
    const ctx: HelperContext = { page, siteUrls: options.siteUrls };
    for (const target of targets) {
      let url: string | undefined;
      if (target.url.kind === 'literal') url = target.url.url;
      else if (target.url.kind === 'helper') url = await runHelperCall(target.url.call, 'url', ctx);
      if (url !== undefined) {
        try {
          await page.goto(url, { waitUntil: 'load' });
        } catch {
          return false;
        }
      }
      for (const action of target.prepActions) await readJs(page, action);
      let value: string;
      if (target.locator.kind === 'html') value = await page.content();
      else if (target.locator.kind === 'js') value = await readJs(page, target.locator.expression);
      else value = await runHelperCall(target.locator.call, 'locator', ctx).catch(() => '');
      if (!(await contentsMatch(target.contents, value, task.intent, options.judge, task.eval.string_note ?? ''))) return false;
    }
    return true;
  };
}

/**
 * Builds the evaluator of one task. `task` may still hold placeholders: they are resolved here
 * with `options.siteUrls` (all strings of the config, as WebArena does for its config files).
 */
export function buildEvaluator(rawTask: WebArenaTask, options: EvaluatorOptions): TaskEvaluator {
  let task: WebArenaTask;
  try {
    task = resolveTaskPlaceholders(rawTask, options.siteUrls);
  } catch (error) {
    throw new TaskConfigError(rawTask.task_id, 'sites', (error as Error).message);
  }
  // program_html navigates, so the checks that read the episode's final URL run first.
  const order = ['string_match', 'url_match', 'program_html'] as const;
  const types = order.filter((type) => task.eval.eval_types.includes(type));
  const checks: Check[] = types.map((type) => {
    switch (type) {
      case 'string_match':
        return stringMatch(task, options.judge);
      case 'url_match':
        return urlMatch(task);
      case 'program_html':
        return programHtml(task, options);
    }
  });
  return {
    async evaluate(page, answer) {
      for (const check of checks) if (!(await check(page, answer ?? ''))) return 0;
      return 1;
    },
  };
}
