/**
 * The curriculum's task generator composes constraints (WebRL's in-breadth evolution): failed tasks
 * of a component template yield composed tasks besides slot variations, deterministically, never
 * repeating a known intent nor touching held-out templates, and the splits ignore composed templates.
 * In real Chromium the oracle solves a sample of every composed template's drafts, and a trajectory
 * that meets only one of the two constraints scores 0.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { OracleStep } from '../../browser/contract';
import { BrowserPool } from '../../browser/pool';
import { createOraclePolicy } from '../../browser/policies/oracle';
import { EmbeddedEnvironment, toEpisodeTask } from '../../env/embedded';
import { startEmbeddedSites, type EmbeddedSites } from '../../env/embeddedSites';
import { DeterministicJudge } from '../../env/evaluators/judge';
import { Rng } from '../../env/random';
import { WEBARENA_DEFAULT_SITE_URLS } from '../../env/siteUrls';
import { evolvableTemplates, evolveTasks, type EmbeddedEvolveRequest } from '../../env/tasks/evolve';
import { generateSplits, TEMPLATES, toTask } from '../../env/tasks/generate';
import { buildTasks, parseTasks } from '../../env/tasks/loader';
import type { WebArenaTask } from '../../env/tasks/schema';
import type { TaskTemplate } from '../../env/tasks/template';
import { buildWorld, DEFAULT_SEED, freshStates } from '../../env/world';

const { train, test: testSplit } = generateSplits();
const composed = TEMPLATES.filter((t) => t.composes);
const byId = new Map(TEMPLATES.map((t) => [t.id, t]));
const componentIds = new Set(composed.flatMap((t) => t.composes ?? []));
const known = new Set([...train, ...testSplit].map((t) => t.intent));
const FIRST_ID = 500_000;

function request(failed: WebArenaTask[], overrides: Partial<EmbeddedEvolveRequest> = {}): EmbeddedEvolveRequest {
  return { failed, knownIntents: known, count: 120, seed: 7, worldSeed: DEFAULT_SEED, firstTaskId: FIRST_ID, ...overrides };
}

/** Train tasks of the component templates (what the actor would have failed), a few per template. */
const failedComponents = [...componentIds].flatMap((id) => train.filter((t) => t.intent_template_id === id).slice(0, 4));

describe('composed templates', () => {
  test('combine two plain templates of their own site, none held out, each with drafts', () => {
    assert.ok(composed.length >= 2, `composed templates: ${composed.map((t) => t.id).join(', ')}`);
    const world = buildWorld(DEFAULT_SEED);
    for (const t of composed) {
      const [a, b] = (t.composes ?? []).map((id) => byId.get(id));
      assert.ok(a && b && a.id !== b.id, `template ${t.id}`);
      for (const c of [a, b]) assert.ok(c.site === t.site && !c.composes && !c.heldOut, `template ${t.id} composes ${c.id}`);
      assert.ok(t.drafts({ world, fresh: freshStates(world), rng: new Rng(1) }).length >= 10, `template ${t.id} has few drafts`);
    }
  });

  test('leave the splits exactly as the plain templates make them', () => {
    const splitTemplates = new Set([...train, ...testSplit].map((t) => t.intent_template_id));
    for (const t of composed) assert.ok(!splitTemplates.has(t.id), `template ${t.id} is in a split`);
    const plain = generateSplits(
      DEFAULT_SEED,
      TEMPLATES.filter((t) => !t.composes),
    );
    assert.equal(JSON.stringify({ train, test: testSplit }), JSON.stringify(plain));
  });
});

describe('evolveTasks with compositions', () => {
  const created = evolveTasks(request(failedComponents));

  test('draws composed tasks from failed component tasks, alongside slot variations', () => {
    const ids = new Set(created.map((t) => t.intent_template_id));
    for (const t of composed) assert.ok(ids.has(t.id), `no task of composed template ${t.id}`);
    for (const id of componentIds) assert.ok(ids.has(id), `no slot variation of template ${id}`);
    // Every failed seed gets a composed task that keeps its slot values (same category, project, forum).
    const keeps = (task: WebArenaTask, seed: WebArenaTask) =>
      Object.entries(seed.instantiation_dict ?? {}).some(([k, v]) => task.instantiation_dict?.[k] === v);
    for (const seed of failedComponents) {
      const compositions = created.filter((t) => byId.get(t.intent_template_id!)?.composes?.includes(seed.intent_template_id!));
      assert.ok(
        compositions.some((t) => keeps(t, seed)),
        `no composed task keeps the slot values of "${seed.intent}"`,
      );
    }
  });

  test("prefers drafts that keep all of the failed task's slot values", () => {
    // One failed "category sorted by price" task: its first composition keeps category and order.
    const seed = train.find((t) => t.intent_template_id === 107)!;
    const out = evolveTasks(request([seed], { count: 2 }));
    assert.deepEqual(
      out.map((t) => t.intent_template_id),
      [107, 116],
    );
    assert.equal(out[1]?.instantiation_dict?.category, seed.instantiation_dict?.category);
    assert.equal(out[1]?.instantiation_dict?.order, seed.instantiation_dict?.order);
  });

  test('are valid WebArena tasks with ids from firstTaskId, unique and unknown intents', () => {
    assert.ok(created.length > 0 && created.length <= 120);
    assert.deepEqual(
      created.map((t) => t.task_id),
      created.map((_, i) => FIRST_ID + i),
    );
    assert.equal(new Set(created.map((t) => t.intent)).size, created.length);
    assert.ok(created.every((t) => !known.has(t.intent)));
    const parsed = parseTasks(JSON.parse(JSON.stringify(created)));
    buildTasks(parsed, { siteUrls: WEBARENA_DEFAULT_SITE_URLS, judge: new DeterministicJudge() });
    for (const t of parsed) assert.deepEqual(t.sites, [byId.get(t.intent_template_id!)?.site]);
  });

  test('are deterministic for (seed, failed tasks, known intents)', () => {
    assert.deepEqual(evolveTasks(request(failedComponents)), created);
    assert.notDeepEqual(evolveTasks(request(failedComponents, { seed: 8 })), created);
  });

  test('never repeat a known intent, earlier generated ones included', () => {
    const again = evolveTasks(request(failedComponents, { knownIntents: new Set([...known, ...created.map((t) => t.intent)]) }));
    assert.ok(again.length > 0);
    const before = new Set(created.map((t) => t.intent));
    assert.ok(again.every((t) => !before.has(t.intent) && !known.has(t.intent)));
  });

  test('let failed composed tasks evolve further', () => {
    const failedComposed = created.filter((t) => byId.get(t.intent_template_id!)?.composes);
    const out = evolveTasks(request(failedComposed, { knownIntents: new Set([...known, ...created.map((t) => t.intent)]), count: 30 }));
    assert.ok(out.length > 0);
    assert.ok(out.every((t) => byId.get(t.intent_template_id!)?.composes));
  });

  test('never use held-out templates, as seeds or as components', () => {
    const heldOut = testSplit.filter((t) => byId.get(t.intent_template_id!)?.heldOut);
    assert.ok(heldOut.length > 0);
    assert.deepEqual(evolveTasks(request(heldOut)), []);
    const mixed = evolveTasks(request([...heldOut, ...failedComponents]));
    assert.ok(mixed.every((t) => !byId.get(t.intent_template_id!)?.heldOut));
    // A composition with a held-out component is not drawn from.
    const probe: TaskTemplate = { id: 199, site: 'shopping', intent: 'probe {{category}}', composes: [107, 115], drafts: () => [] };
    assert.equal(byId.get(115)?.heldOut, true);
    assert.ok(!evolvableTemplates([...TEMPLATES, probe]).has(199));
    assert.ok(evolvableTemplates().has(116));
  });
});

/** Trajectories that meet only one of a composed task's two constraints. */
function oneConstraintOnly(task: WebArenaTask): { label: string; oracle: OracleStep[] }[] {
  const oracle = task.oracle ?? [];
  const without = (i: number) => oracle.filter((_, k) => k !== i);
  const exitAt = oracle.length - 1;
  const world = buildWorld(DEFAULT_SEED);
  switch (task.intent_template_id) {
    case 116:
      // [parent, category, price bucket, sorter, exit]
      return [
        { label: 'price filter only', oracle: without(exitAt - 1) },
        { label: 'sort only', oracle: without(exitAt - 2) },
      ];
    case 315:
      // [Forums, forum, New, Upvote, Top, Downvote, exit]
      return [
        { label: 'upvote only', oracle: without(exitAt - 1) },
        { label: 'downvote only', oracle: without(exitAt - 3) },
      ];
    case 417: {
      const g = freshStates(world).gitlab;
      const project = g.projects.all().find((p) => p.name === task.instantiation_dict?.project)!;
      const issues = g.projectIssues(project.id);
      const label = String(task.instantiation_dict?.label);
      const answer = (n: number): OracleStep[] => [...oracle.slice(0, exitAt), { action: 'exit', message: String(n) }];
      return [
        { label: 'open issues of any label', oracle: answer(g.filterIssues(issues, { state: 'opened' }).length) },
        { label: 'labeled issues of any state', oracle: answer(g.filterIssues(issues, { state: 'all', label }).length) },
      ];
    }
    default:
      throw new Error(`no one-constraint trajectories for composed template ${task.intent_template_id}`);
  }
}

describe('composed tasks in real Chromium', () => {
  const PER_TEMPLATE = 3;
  const world = buildWorld(DEFAULT_SEED);
  const tasks = composed.flatMap((t, k) =>
    new Rng(20241103)
      .fork(`composed-${t.id}`)
      .sample(t.drafts({ world, fresh: freshStates(world), rng: new Rng(DEFAULT_SEED).fork('tasks').fork(`template-${t.id}`).fork('drafts') }), PER_TEMPLATE)
      .map((draft, i) => toTask(t, draft, 900_000 + k * 100 + i)),
  );
  let sites: EmbeddedSites;
  let pool: BrowserPool;
  let env: EmbeddedEnvironment;

  before(async () => {
    sites = await startEmbeddedSites();
    env = new EmbeddedEnvironment({ siteUrls: sites.urls, tasks });
    pool = await BrowserPool.start({ size: 2 });
  });
  after(async () => {
    await pool?.close();
    await sites?.stop();
  });

  async function score(task: WebArenaTask, oracle: OracleStep[]) {
    const policy = createOraclePolicy();
    const request = { task: { ...toEpisodeTask(task, sites.urls), oracle }, policy, environment: env };
    let result = await pool.runEpisode(request);
    for (let retry = 0; retry < 2 && result.outcome.infraFailure; retry++) result = await pool.runEpisode(request);
    return result.outcome;
  }

  test(`the oracle solves ${PER_TEMPLATE} drafts of every composed template`, async () => {
    assert.equal(tasks.length, composed.length * PER_TEMPLATE);
    const failures: string[] = [];
    await Promise.all(
      tasks.map(async (task) => {
        const outcome = await score(task, task.oracle ?? []);
        if (outcome.score !== 1 || outcome.reason !== 'exit')
          failures.push(`task ${task.task_id} (${task.intent}): ${outcome.reason} score ${outcome.score} ${outcome.detail ?? ''}`);
      }),
    );
    assert.deepEqual(failures, []);
  });

  test('a trajectory meeting only one of the two constraints scores 0', async () => {
    const failures: string[] = [];
    const runs = composed.flatMap((t) => {
      const task = tasks.find((x) => x.intent_template_id === t.id)!;
      return oneConstraintOnly(task).map((partial) => ({ task, ...partial }));
    });
    await Promise.all(
      runs.map(async ({ task, label, oracle }) => {
        const outcome = await score(task, oracle);
        if (outcome.infraFailure || outcome.reason !== 'exit' || outcome.score !== 0)
          failures.push(`task ${task.task_id} (${task.intent}), ${label}: ${outcome.reason} score ${outcome.score}`);
      }),
    );
    assert.deepEqual(failures, []);
  });
});
