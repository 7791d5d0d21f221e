import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DeterministicJudge } from '../../env/evaluators/judge';
import { buildTasks, countTasks, parseTasks } from '../../env/tasks/loader';
import { cachedTasks, generateSplits, TEMPLATES } from '../../env/tasks/generate';
import { TaskConfigError } from '../../env/tasks/schema';
import { WEBARENA_DEFAULT_SITE_URLS } from '../../env/siteUrls';

const { train, test: testSplit } = generateSplits();
const actions = (steps: { action: string }[] | undefined) => (steps ?? []).filter((s) => s.action !== 'exit').length;

describe('embedded task sets', () => {
  test('are deterministic for a seed', () => {
    const again = generateSplits();
    assert.deepEqual(again.train, train);
    assert.deepEqual(again.test, testSplit);
  });

  test('train: >= 600 tasks from >= 40 templates across the four sites', () => {
    assert.ok(train.length >= 600, `train has ${train.length}`);
    assert.ok(new Set(train.map((t) => t.intent_template_id)).size >= 40);
    assert.deepEqual(Object.keys(countTasks(train).bySite).sort(), ['gitlab', 'reddit', 'shopping', 'shopping_admin']);
  });

  test('test: >= 165 tasks, >= 8 templates never in train, no instantiation shared with train', () => {
    assert.ok(testSplit.length >= 165, `test has ${testSplit.length}`);
    const trainTemplates = new Set(train.map((t) => t.intent_template_id));
    const heldOut = new Set(testSplit.map((t) => t.intent_template_id).filter((id) => !trainTemplates.has(id)));
    assert.ok(heldOut.size >= 8, `held-out templates: ${heldOut.size}`);
    const trainIntents = new Set(train.map((t) => t.intent));
    assert.equal(testSplit.filter((t) => trainIntents.has(t.intent)).length, 0);
    const ids = new Set([...train, ...testSplit].map((t) => t.task_id));
    assert.equal(ids.size, train.length + testSplit.length);
  });

  test('cover all three eval types and 1-step to >= 10-step oracle solutions', () => {
    for (const split of [train, testSplit]) {
      assert.deepEqual(Object.keys(countTasks(split).byEvalType).sort(), ['program_html', 'string_match', 'url_match']);
      const lengths = split.map((t) => actions(t.oracle));
      assert.equal(Math.min(...lengths), 1);
      assert.ok(Math.max(...lengths) >= 10);
    }
  });

  test('every task carries its oracle, survives the task-file schema and builds its evaluator', () => {
    const all = parseTasks(JSON.parse(JSON.stringify([...train, ...testSplit])));
    assert.ok(all.every((t) => (t.oracle?.length ?? 0) >= 2 && t.oracle?.at(-1)?.action === 'exit'));
    buildTasks(all, { siteUrls: WEBARENA_DEFAULT_SITE_URLS, judge: new DeterministicJudge() });
    // Composed templates feed only the curriculum's generator (test/env/evolve.test.ts).
    assert.ok(TEMPLATES.filter((t) => !t.composes).every((t) => all.some((task) => task.intent_template_id === t.id)));
  });

  test('are cached under .webrl/tasks and read back unchanged', async () => {
    const root = await mkdtemp(join(tmpdir(), 'webrl-tasks-'));
    try {
      const written = await cachedTasks('test', undefined, root);
      const read = await cachedTasks('test', undefined, root);
      assert.deepEqual(read, written);
      assert.equal(read.length, testSplit.length);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});

describe('task-file validation errors name the task and the field', () => {
  const base = (overrides: Record<string, unknown>, evalOverrides: Record<string, unknown> = {}) => ({
    sites: ['reddit'],
    task_id: 7,
    start_url: '__REDDIT__',
    intent: 'Do it',
    eval: {
      eval_types: ['program_html'],
      reference_answers: null,
      reference_url: '',
      program_html: [{ url: 'last', locator: '', required_contents: { must_include: ['x'] } }],
      ...evalOverrides,
    },
    ...overrides,
  });
  const build = (task: unknown) => buildTasks(parseTasks([task]), { siteUrls: WEBARENA_DEFAULT_SITE_URLS, judge: new DeterministicJudge() });
  const fails = (task: unknown, pattern: RegExp) =>
    assert.throws(
      () => build(task),
      (error: unknown) => error instanceof TaskConfigError && pattern.test(error.message),
    );

  test('unknown helper', () => {
    fails(
      base({}, { program_html: [{ url: "func:reddit_get_latest_post('x')", locator: '', required_contents: { must_include: ['x'] } }] }),
      /^task 7: eval\.program_html\[0\]\.url: unknown url helper "reddit_get_latest_post"/,
    );
    fails(
      base({}, { program_html: [{ url: 'last', locator: 'func:nope(__page__)', required_contents: { must_include: ['x'] } }] }),
      /^task 7: eval\.program_html\[0\]\.locator: unknown locator helper "nope"/,
    );
  });

  test('unknown site, eval type, matcher, locator', () => {
    fails(base({ sites: ['classifieds'] }), /^task 7: sites\[0\]:/);
    fails(base({}, { eval_types: ['page_image_query'] }), /^task 7: eval\.eval_types\[0\]:/);
    fails(
      base({}, { program_html: [{ url: 'last', locator: '', required_contents: { one_of: ['x'] } }] }),
      /^task 7: eval\.program_html\[0\]\.required_contents:/,
    );
    fails(
      base({}, { program_html: [{ url: 'last', locator: '#id', required_contents: { must_include: ['x'] } }] }),
      /^task 7: eval\.program_html\[0\]\.locator: expected/,
    );
  });

  test('missing references, unresolvable placeholders, duplicate ids', () => {
    fails(base({}, { eval_types: ['string_match'], reference_answers: null }), /^task 7: eval\.reference_answers: string_match needs reference_answers/);
    assert.throws(
      () => buildTasks(parseTasks([base({ start_url: '__GITLAB__' })]), { siteUrls: { reddit: 'http://r' }, judge: new DeterministicJudge() }),
      /^TaskConfigError: task 7: sites: no URL configured for site gitlab|task 7: sites: no URL configured for site gitlab/,
    );
    assert.throws(() => parseTasks([base({}), base({})]), /task 7: task_id: duplicate task id/);
  });
});
