/**
 * WebArena's evaluation rules, in one of two harnesses' semantics: WebArena-Lite's (the default, and
 * the embedded sites' tasks) or the original WebArena benchmark's (`harness: 'webarena'`). Either way
 * the task's evaluators (string_match, url_match, program_html) each score 0 or 1 and the scores
 * multiply. Building checks everything that can be checked without a browser (helpers, placeholders,
 * matchers the harness reads, whether an LLM judge is needed), and `checkWebArenaTask` reports every
 * problem of a task, each naming the task id and the field, so a bad task file fails at load time
 * rather than mid-rollout.
 */
import type { Page } from 'playwright-core';
import { resolvePlaceholders, type SiteUrls } from '../../../siteUrls';
import { TaskConfigError, type ProgramHtmlTarget, type ReferenceAnswers, type RequiredContents, type WebArenaTask } from '../../../tasks/schema';
import { checkHelperCall, parseHelperCall, runHelperCall, type HelperCall, type HelperContext } from '../../helpers';
import type { FuzzyJudge } from '../../judge';
import { pythonStr, unescapeHtml } from '../../pageValues';
import { exactMatch, mustExclude, mustInclude, webArenaClean, webArenaExactMatch, webArenaMustInclude, type Harness } from '../../textMatch';
import { urlMatches } from '../../urlMatch';
import type { ScoringOptions, TaskCheck } from '../contract';

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

/** WebArena-Lite's matching of an answer or a page value against every matcher it names. */
async function liteContentsMatch(
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

/**
 * WebArena's StringEvaluator: the answer is cleaned once, then each matcher multiplies the score;
 * must_include items are tested one by one (whole-token only for a lone one-character item),
 * fuzzy_match asks the judge per reference item, and "N/A" passes on an exact "n/a" answer or,
 * failing that, replaces the score with the judge's ua_match verdict against `string_note`.
 */
function webArenaStringMatch(task: WebArenaTask, judge: FuzzyJudge): Check {
  const references = task.eval.reference_answers ?? {};
  return async (_page, answer) => {
    const pred = webArenaClean(answer);
    let score = true;
    if (references.exact_match !== undefined) score &&= webArenaExactMatch(references.exact_match, pred);
    const include = references.must_include ?? [];
    for (const item of include) score &&= webArenaMustInclude(item, pred, include.length === 1);
    const fuzzy = references.fuzzy_match;
    if (fuzzy === 'N/A') {
      score &&= webArenaExactMatch('N/A', pred);
      if (!score) score = await judge.sameUnachievableReason({ intent: task.intent, reason: task.eval.string_note ?? '', answer: pred });
    } else if (fuzzy) {
      for (const reference of fuzzy) if (score) score = await judge.matches({ intent: task.intent, reference: [reference], answer: pred });
    }
    return score;
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

/** WebArena's JS locator: `() => expression` evaluated in the page, as Python's str() prints it; '' if it throws. */
async function readJsWebArena(page: Page, expression: string): Promise<string> {
  try {
    return pythonStr(await page.evaluate(`(() => (${expression}))()`));
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

function compileTarget(
  task: WebArenaTask,
  target: ProgramHtmlTarget,
  index: number,
  harness: Harness,
  problems: TaskConfigError[],
): CompiledTarget | undefined {
  const field = `eval.program_html[${index}]`;
  const problem = (sub: string, message: string) => void problems.push(new TaskConfigError(task.task_id, `${field}.${sub}`, message));
  const before = problems.length;
  const helper = (expression: string, kind: 'url' | 'locator'): HelperCall | undefined => {
    try {
      const call = parseHelperCall(expression.slice('func:'.length));
      checkHelperCall(call, kind);
      return call;
    } catch (error) {
      problem(kind, (error as Error).message);
      return undefined;
    }
  };
  const rawUrl = target.url.trim();
  let url: CompiledTarget['url'] | undefined;
  if (rawUrl === 'last') url = { kind: 'last' };
  else if (rawUrl.startsWith('func:')) {
    const call = helper(rawUrl, 'url');
    url = call && { kind: 'helper', call };
  } else if (/^https?:\/\//.test(rawUrl)) url = { kind: 'literal', url: rawUrl };
  else problem('url', `expected "last", func:helper(...) or an http(s) URL, got "${rawUrl}"`);

  const rawLocator = target.locator.trim();
  let locator: CompiledTarget['locator'] | undefined;
  if (!rawLocator) locator = { kind: 'html' };
  else if (rawLocator.startsWith('document.') || rawLocator.startsWith('[...document.')) locator = { kind: 'js', expression: rawLocator };
  else if (rawLocator.startsWith('func:')) {
    const call = helper(rawLocator, 'locator');
    locator = call && { kind: 'helper', call };
  } else problem('locator', `expected "", a document. expression or func:helper(...), got "${rawLocator}"`);

  HARNESS_RULES[harness].targetProblems(Object.keys(target.required_contents), (message) => problem('required_contents', message));
  if (problems.length > before || !url || !locator) return undefined;
  return { url, locator, prepActions: target.prep_actions ?? [], contents: target.required_contents };
}

/** Where a task needs an LLM judge in WebArena (fuzzy_match, ua_match): the fields. */
export function llmJudgedFields(task: WebArenaTask, harness: Harness = 'webarena-lite'): string[] {
  const fields: string[] = [];
  if (task.eval.eval_types.includes('string_match') && task.eval.reference_answers?.fuzzy_match !== undefined)
    fields.push('eval.reference_answers.fuzzy_match');
  if (HARNESS_RULES[harness].judgesProgramHtml && task.eval.eval_types.includes('program_html')) {
    (task.eval.program_html ?? []).forEach((target, i) => {
      if (target.required_contents.fuzzy_match !== undefined) fields.push(`eval.program_html[${i}].required_contents.fuzzy_match`);
    });
  }
  return fields;
}

function programHtml(task: WebArenaTask, targets: CompiledTarget[], options: ScoringOptions, harness: Harness): Check {
  const rules = HARNESS_RULES[harness];
  return async (page) => {
    const ctx: HelperContext = { page, siteUrls: options.siteUrls, ...(options.shopAdmin ? { shopAdmin: options.shopAdmin } : {}) };
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
      if (!(await rules.targetMatches(target, { page, helpers: ctx, task, judge: options.judge }))) return false;
    }
    return true;
  };
}

/** What a harness's program_html check reads a target with. */
interface TargetReading {
  page: Page;
  helpers: HelperContext;
  task: WebArenaTask;
  judge: FuzzyJudge;
}

/** What tells the harnesses apart: one row per harness, read wherever a task is checked or scored. */
interface HarnessRules {
  /** Problems this harness finds in a task: fields it would read otherwise, or not at all. */
  taskProblems(task: WebArenaTask, problem: (field: string, message: string) => void): void;
  /** Problems with a program_html target's required_contents (their keys). */
  targetProblems(keys: string[], problem: (message: string) => void): void;
  /** Whether every LLM-graded field needs an LLM judge (else only with `requireLlmJudge`). */
  alwaysNeedsLlmJudge: boolean;
  /** Whether program_html's fuzzy_match is graded by the judge (a field needing an LLM). */
  judgesProgramHtml: boolean;
  stringMatch(task: WebArenaTask, judge: FuzzyJudge): Check;
  /** The url_match rule of a task without url_note. */
  defaultUrlRule: 'EXACT' | 'GOLD in PRED';
  /** Reads one program_html target on the page (already at its URL) and matches its required contents. */
  targetMatches(target: CompiledTarget, reading: TargetReading): Promise<boolean>;
}

const webArenaLiteRules: HarnessRules = {
  taskProblems: () => {},
  targetProblems: () => {},
  alwaysNeedsLlmJudge: false,
  judgesProgramHtml: true,
  stringMatch: (task, judge) => {
    const references = task.eval.reference_answers ?? {};
    return (_page, answer) => liteContentsMatch(references, answer, task.intent, judge, task.eval.string_note ?? '');
  },
  defaultUrlRule: 'EXACT',
  async targetMatches(target, { page, helpers, task, judge }) {
    for (const action of target.prepActions) await readJs(page, action);
    let value: string;
    if (target.locator.kind === 'html') value = await page.content();
    else if (target.locator.kind === 'js') value = await readJs(page, target.locator.expression);
    else value = await runHelperCall(target.locator.call, 'locator', helpers).catch(() => '');
    return liteContentsMatch(target.contents, value, task.intent, judge, task.eval.string_note ?? '');
  },
};

const webArenaRules: HarnessRules = {
  taskProblems(task, problem) {
    const types = task.eval.eval_types;
    if (types.includes('url_match') && task.eval.url_note === 'EXACT') {
      problem(
        'eval.url_note',
        `WebArena's harness matches URLs by "GOLD in PRED" only (its default); "EXACT" is WebArena-Lite's (use the webarena-lite harness)`,
      );
    }
    if (types.includes('string_match') && task.eval.reference_answers?.must_exclude) {
      problem('eval.reference_answers.must_exclude', "WebArena's harness has no must_exclude for answers (use the webarena-lite harness)");
    }
    if (types.includes('string_match') && task.eval.reference_answers?.fuzzy_match === 'N/A' && !task.eval.string_note) {
      problem('eval.string_note', 'fuzzy_match "N/A" needs the reason the task is unachievable, which ua_match compares the answer with');
    }
  },
  targetProblems(keys, problem) {
    if (!keys.includes('exact_match') && !keys.includes('must_include')) {
      problem(`WebArena's harness reads exact_match or must_include here, not ${keys.join(', ')} (use the webarena-lite harness)`);
    } else {
      const ignored = keys.filter((key) => key !== (keys.includes('exact_match') ? 'exact_match' : 'must_include'));
      if (ignored.length)
        problem(`WebArena's harness would ignore ${ignored.join(', ')} beside ${keys.includes('exact_match') ? 'exact_match' : 'must_include'}`);
    }
  },
  alwaysNeedsLlmJudge: true,
  judgesProgramHtml: false,
  stringMatch: webArenaStringMatch,
  defaultUrlRule: 'GOLD in PRED',
  async targetMatches(target, { page, helpers }) {
    // WebArena: prep actions run before a JS locator only, and stop at the first that throws.
    let value: string;
    if (target.locator.kind === 'html') value = await page.content();
    else if (target.locator.kind === 'js') {
      for (const action of target.prepActions) {
        try {
          await page.evaluate(`(() => (${action}))()`);
        } catch {
          break;
        }
      }
      value = await readJsWebArena(page, target.locator.expression);
    } else value = await runHelperCall(target.locator.call, 'locator', helpers);
    value = await unescapeHtml(page, value);
    const contents = target.contents;
    if (contents.exact_match !== undefined) return webArenaExactMatch(contents.exact_match, value);
    return (contents.must_include ?? []).every((item) => item.split(' |OR| ').some((alternative) => webArenaMustInclude(alternative, value, false)));
  },
};

/** WebArena's two harnesses, one row each. */
export const HARNESS_RULES: Record<Harness, HarnessRules> = { 'webarena-lite': webArenaLiteRules, webarena: webArenaRules };

/**
 * Checks a task under one of WebArena's harnesses and compiles its evaluator: every problem found
 * (each a TaskConfigError naming the task and field), and the evaluator when there is none. `rawTask`
 * may still hold placeholders: they are resolved here with `options.siteUrls` (all strings of the
 * config, as WebArena does).
 */
export function checkWebArenaTask(rawTask: WebArenaTask, options: ScoringOptions, harness: Harness): TaskCheck {
  let task: WebArenaTask;
  try {
    task = resolveTaskPlaceholders(rawTask, options.siteUrls);
  } catch (error) {
    return { problems: [new TaskConfigError(rawTask.task_id, 'sites', (error as Error).message)] };
  }
  const problems: TaskConfigError[] = [];
  const problem = (field: string, message: string) => void problems.push(new TaskConfigError(task.task_id, field, message));
  const types = task.eval.eval_types;

  const rules = HARNESS_RULES[harness];
  if (types.includes('webarena_verified'))
    problem('eval.eval_types', 'a WebArena-Verified task is scored by its official evaluator: use harness webarena-verified');
  rules.taskProblems(task, problem);
  if ((options.requireLlmJudge || rules.alwaysNeedsLlmJudge) && options.judge.kind !== 'llm') {
    for (const field of llmJudgedFields(task, harness)) {
      const value = field === 'eval.reference_answers.fuzzy_match' ? task.eval.reference_answers?.fuzzy_match : undefined;
      const what = value === 'N/A' ? 'ua_match' : 'fuzzy_match';
      problem(field, `${what} needs an LLM judge and none is configured (set models.judge to a chat endpoint and pass the campaign file with -c)`);
    }
  }
  const targets = types.includes('program_html') ? (task.eval.program_html ?? []).map((target, i) => compileTarget(task, target, i, harness, problems)) : [];
  if (problems.length) return { problems };

  // program_html navigates, so the checks that read the episode's final URL run first.
  const checks: Check[] = [];
  if (types.includes('string_match')) checks.push(rules.stringMatch(task, options.judge));
  if (types.includes('url_match')) {
    const reference = task.eval.reference_url ?? '';
    const rule = task.eval.url_note ?? rules.defaultUrlRule;
    checks.push(async (page) => urlMatches(harness, reference, rule, page.url()));
  }
  if (types.includes('program_html')) checks.push(programHtml(task, targets as CompiledTarget[], options, harness));
  return {
    problems,
    evaluator: {
      async evaluate(page, answer) {
        for (const check of checks) if (!(await check(page, answer ?? ''))) return 0;
        return 1;
      },
    },
  };
}
