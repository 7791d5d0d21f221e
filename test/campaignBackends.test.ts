/**
 * The campaign activities with remote model backends chosen by the config's `models` section, and at
 * the edges of the embedded path: the activity functions run directly (in an activity context) over
 * the real MinIO, with local protocol servers standing in for the LLM, critic and trainer endpoints.
 */
import { createPromptBuilder } from '../browser/policies/promptBudget';
import { webrlLlama3Format } from '../browser/policies/promptFormat';
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createBrowserActivities } from '../activities/campaign/browserActivities';
import { BrowserRuntime } from '../activities/campaign/browserRuntime';
import { CampaignContext } from '../activities/campaign/context';
import { createControlActivities } from '../activities/campaign/controlActivities';
import { taskTemplate } from '../activities/campaign/mostPromisingTasks';
import type { TrajectoryIndexRow, TrajectoryRecord } from '../activities/campaign/episodes';
import type { ExperienceRow } from '../activities/campaign/experience';
import type { RewardRow } from '../activities/campaign/trainActivities';
import { createTrainActivities } from '../activities/campaign/trainActivities';
import type { ModelRoles, TrainingTarget, TrainSpec } from '../models/backends/roles';
import type { PhaseManifestData } from '../activities/campaign/phaseManifest';
import { renderActorTrainingText } from '../campaign/report';
import type { TrainerMetrics } from '../models/train/trainerMetrics';
import { trainingRecordsKey, type TrainingStepRecord } from '../models/train/trainingRecord';
import { parseConfig } from '../config/load';
import type { Config } from '../config/campaignConfig';
import type { WebArenaTask } from '../env/tasks/schema';
import { freePort } from '../infra/processes';
import type { ModelState } from '../models/state';
import { manifestKey } from '../storage/keys';
import type { DatasetRef, PhaseScope } from '../storage/keys';
import { activityRunner } from './harness/activityContext';
import { startTestStack, type TestStack } from './harness/stack';
import { workerRoles } from './harness/roles';
import { chatCompletion, startServer, type RecordedRequest, type TestServer } from './models/fixtures/servers';
import { registerModelBackend } from '../models/backends/registry';
import { toyModelBackend } from './fixtures/toyModelBackend';
import { embeddedSplit } from '../env/backends/embedded';

// A model backend in one folder plus this line: configs below may name it (models.critic.backend: toy).
registerModelBackend(toyModelBackend);

/** What the fake trainer says its actor job did. */
const TRAINED: TrainerMetrics = {
  objective: 'actor-webrl',
  rows: 3,
  optimizerSteps: 3,
  skippedSteps: 1,
  positiveRows: { success: 1, rollout: 0, replay: 2, demonstration: 0 },
  klPerToken: { mean: 0.012, maxAbs: 0.03 },
};

const FAKE_TRAINER = fileURLToPath(new URL('./models/fixtures/fakeTrainer.mjs', import.meta.url));
const MODEL = 'judge-test';

const heartbeats: unknown[] = [];
const run = activityRunner((details) => heartbeats.push(details));

function userText(request: RecordedRequest): string {
  const messages = (request.body as { messages: { role: string; content: string }[] }).messages;
  return messages.find((m) => m.role === 'user')!.content;
}

/** The task list a feasibility prompt carries (the JSON array after "Tasks:"). */
function promptTasks(request: RecordedRequest): { task_id: string; intent: string }[] {
  const text = userText(request);
  const start = text.indexOf('[', text.indexOf('Tasks:'));
  return JSON.parse(text.slice(start, text.indexOf('\n]', start) + 2)) as { task_id: string; intent: string }[];
}

function state(intent: string, exit: string): ModelState {
  return {
    intent,
    history: [{ response: `exit(message="${exit}")`, action: { name: 'exit', message: exit } as never }],
    observation: { url: 'http://127.0.0.1/', title: 'page', html: `<html><body>${intent}</body></html>` } as ModelState['observation'],
  };
}

describe('campaign activities with remote model backends', () => {
  let stack: TestStack;
  let ctx: CampaignContext;
  const servers: TestServer[] = [];
  let configs = 0;

  before(async () => {
    stack = await startTestStack();
    ctx = new CampaignContext(stack.store, join(stack.dir, 'work'));
  });
  after(async () => {
    await Promise.all(servers.map((server) => server.close()));
    await stack?.stop();
  });

  async function server(handle: Parameters<typeof startServer>[0]): Promise<TestServer> {
    const started = await startServer(handle);
    servers.push(started);
    return started;
  }

  /** Stores a frozen campaign config and returns a phase scope that names it. */
  async function scope(raw: Record<string, unknown>, phase = 1): Promise<{ scope: PhaseScope; config: Config }> {
    const config = parseConfig({ ...raw, s3: stack.config.s3, stack: stack.config.stack });
    const campaignId = `backends-${++configs}`;
    const configKey = `campaigns/${campaignId}/config.json`;
    await stack.store.putJson(configKey, config);
    return { scope: { campaignId, configKey, phase, seed: 7 }, config };
  }

  const endpoint = (url: string) => ({ baseUrl: `${url}/v1`, model: MODEL, maxAttempts: 1, retryDelayMs: 0, timeoutMs: 5_000 });

  test('the feasibility judge keeps feasible tasks after the critic, records verdicts, and records a malformed reply', async () => {
    const critic = await server((request) => {
      const states = (request.body as { states: unknown[] }).states;
      return { json: { values: states.map(() => [0.4, 0.6]) } };
    });
    const judge = await server((request) => {
      const text = userText(request);
      // Reddit gets garbage; shopping gets verdicts: even positions feasible, odd not, the last left out.
      if (text.startsWith('Website: reddit')) return { json: chatCompletion('I am not sure, sorry.', MODEL) };
      const tasks = promptTasks(request);
      const verdicts = tasks
        .slice(0, -1)
        .map((task, i) => ({ task_id: task.task_id, feasible: i % 2 === 0, reason: i % 2 === 0 ? 'on the site' : 'needs e-mail' }));
      return { json: chatCompletion('```json\n' + JSON.stringify(verdicts) + '\n```', MODEL) };
    });
    const ports = { shopping: await freePort(), shopping_admin: await freePort(), reddit: await freePort(), gitlab: await freePort() };
    const { scope: phase, config } = await scope({
      sites: { ports },
      concurrency: { browserContexts: 1 },
      models: { critic: { backend: 'http', baseUrl: critic.url, maxAttempts: 1 }, feasibility: { backend: 'chat', ...endpoint(judge.url) } },
    });
    const train = embeddedSplit(config.campaign.environment.worldSeed, 'train');
    const shopping = train.filter((t) => t.sites[0] === 'shopping').slice(0, 4);
    const reddit = train.filter((t) => t.sites[0] === 'reddit').slice(0, 2);
    const candidates = await ctx.writeDataset(ctx.key(phase, 'tasks', 'candidates.jsonl'), [...shopping, ...reddit]);
    const runtime = await BrowserRuntime.start(config);
    try {
      const activities = createBrowserActivities({ ctx, runtime, roles: workerRoles(ctx) });
      const result = await run(activities.filterTasksByCritic, { ...phase, candidates, critic: 'unused/critic.onnx', band: [0.05, 0.75] });
      const kept = await ctx.readDataset<WebArenaTask>(result.tasks);
      assert.deepEqual(
        kept.map((t) => t.task_id),
        [shopping[0]!.task_id, shopping[2]!.task_id],
      );
      assert.ok(Math.abs(result.meanValue - 0.4) < 1e-9, `mean critic value ${result.meanValue}`);
      const record = await stack.store.getJson<{
        verdicts: { task_id: string; feasible: boolean }[];
        dropped: unknown[];
        unjudged: unknown[];
        failures: { site: string; reason: string; raw?: string }[];
      }>(ctx.key(phase, 'tasks', 'feasibility.json'));
      assert.equal(record.verdicts.length, 3);
      assert.deepEqual(record.dropped, [shopping[1]!.task_id]);
      assert.deepEqual(new Set(record.unjudged), new Set([shopping[3]!.task_id, ...reddit.map((t) => t.task_id)]));
      const garbage = record.failures.find((f) => f.site === 'reddit');
      assert.match(garbage?.reason ?? '', /no JSON/);
      assert.equal(garbage?.raw, 'I am not sure, sorry.');
      assert.ok(record.failures.some((f) => f.site === 'shopping' && /no valid verdict for 1 task/.test(f.reason)));
      // Idempotent: a retry returns the published output without asking the judge again.
      const asked = judge.requests.length;
      assert.deepEqual(await run(activities.filterTasksByCritic, { ...phase, candidates, critic: 'unused/critic.onnx', band: [0.05, 0.75] }), result);
      assert.equal(judge.requests.length, asked);
    } finally {
      await runtime.close();
    }
  });

  test('given a limit, the critic filter keeps the highest-valued in-band tasks, in candidate order', async () => {
    // Values by position: every third candidate is out of the band; the others rise with position.
    const critic = await server((request) => {
      const states = (request.body as { states: unknown[] }).states;
      return { json: { values: states.map((_, i) => (i % 3 === 2 ? [0.9, 0.95] : [0.1 + i / 100, 0.05])) } };
    });
    const ports = { shopping: await freePort(), shopping_admin: await freePort(), reddit: await freePort(), gitlab: await freePort() };
    const raw = { sites: { ports }, concurrency: { browserContexts: 1 }, models: { critic: { backend: 'http', baseUrl: critic.url, maxAttempts: 1 } } };
    const { scope: phase, config } = await scope(raw);
    // Nine candidates of nine templates, so the spread over templates does not reorder them.
    const byTemplate = new Map<number | undefined, WebArenaTask>();
    for (const task of embeddedSplit(config.campaign.environment.worldSeed, 'train').filter((t) => t.sites[0] === 'shopping')) {
      if (!byTemplate.has(task.intent_template_id)) byTemplate.set(task.intent_template_id, task);
    }
    const candidates = [...byTemplate.values()].slice(0, 9);
    assert.equal(candidates.length, 9);
    const runtime = await BrowserRuntime.start(config);
    try {
      const activities = createBrowserActivities({ ctx, runtime, roles: workerRoles(ctx) });
      const ref = await ctx.writeDataset(ctx.key(phase, 'tasks', 'candidates.jsonl'), candidates);
      const result = await run(activities.filterTasksByCritic, { ...phase, candidates: ref, critic: 'unused/critic.onnx', band: [0.05, 0.75], limit: 4 });
      const kept = (await ctx.readDataset<WebArenaTask>(result.tasks)).map((t) => t.task_id);
      // In band: positions 0, 1, 3, 4, 6, 7; the four highest-valued are 3, 4, 6, 7.
      assert.deepEqual(
        kept,
        [3, 4, 6, 7].map((i) => candidates[i]!.task_id),
      );
    } finally {
      await runtime.close();
    }
  });

  test("a model backend registered in one line (the toy critic) values the critic filter's candidates from its own settings", async () => {
    const ports = { shopping: await freePort(), shopping_admin: await freePort(), reddit: await freePort(), gitlab: await freePort() };
    const probe = await scope({});
    const candidates = embeddedSplit(probe.config.campaign.environment.worldSeed, 'train')
      .filter((t) => t.sites[0] === 'shopping')
      .slice(0, 3);
    const favourite = candidates[1]!;
    const { scope: phase, config } = await scope({
      sites: { ports },
      concurrency: { browserContexts: 1 },
      models: { critic: { backend: 'toy', favourite: favourite.intent } },
    });
    assert.deepEqual(config.models.critic, { backend: 'toy', favourite: favourite.intent, favouriteValue: 0.5, otherValue: 0.9 });
    const runtime = await BrowserRuntime.start(config);
    try {
      const activities = createBrowserActivities({ ctx, runtime, roles: workerRoles(ctx) });
      const ref = await ctx.writeDataset(ctx.key(phase, 'tasks', 'candidates.jsonl'), candidates);
      const result = await run(activities.filterTasksByCritic, { ...phase, candidates: ref, critic: 'unused/critic.onnx', band: [0.05, 0.75] });
      const kept = await ctx.readDataset<WebArenaTask>(result.tasks);
      // Only the favourite's value (0.5) is inside the band; the others' (0.9) are above it.
      assert.deepEqual(
        kept.map((t) => t.task_id),
        [favourite.task_id],
      );
      assert.ok(Math.abs(result.meanValue - (0.5 + 0.9 + 0.9) / 3) < 1e-9, `mean critic value ${result.meanValue}`);
    } finally {
      await runtime.close();
    }
  });

  test('chat task generation in generateTasks yields new WebArena tasks, deduplicated against known intents', async () => {
    const { config } = await scope({});
    const train = embeddedSplit(config.campaign.environment.worldSeed, 'train');
    const failed = train.filter((t) => t.sites[0] === 'shopping').slice(0, 2);
    const knownTask = train.filter((t) => !failed.includes(t))[10]!;
    const llm = await server((request) => {
      const text = userText(request);
      if (!text.startsWith('Website: shopping')) return { json: chatCompletion('[]', MODEL) };
      const items = [
        {
          intent: 'Find the cheapest blue kettle in the store and tell me its price',
          start_url: '__SHOPPING__',
          eval: { eval_types: ['string_match'], reference_answers: { must_include: ['$'] } },
        },
        { intent: 'find the CHEAPEST blue kettle in the store, and tell me its price!', start_url: '__SHOPPING__' },
        { intent: knownTask.intent, start_url: '__SHOPPING__' },
        { intent: 'Add two bath towels to the shopping cart', start_url: '__SHOPPING__/towels' },
        { intent: 'Open the admin dashboard please', start_url: 'http://elsewhere.example/' },
        { nonsense: true },
      ];
      return { json: chatCompletion(JSON.stringify(items), MODEL) };
    });
    const { scope: generating } = await scope({
      models: { taskGenerator: { backend: 'chat', ...endpoint(llm.url), turns: 1, tasksPerTurn: 6, fillWithEmbedded: false } },
    });
    const failedTasks = await ctx.writeDataset(
      ctx.key(generating, 'failed.jsonl'),
      failed.map((t) => ({ ...t, start_url: '__SHOPPING__' })),
    );
    const activities = createControlActivities({ ctx, roles: workerRoles(ctx) });
    const ref = await run(activities.generateTasks, { ...generating, failedTasks, count: 10, curriculum: true });
    const tasks = await ctx.readDataset<WebArenaTask>(ref);
    assert.deepEqual(
      tasks.map((t) => t.intent),
      ['Find the cheapest blue kettle in the store and tell me its price', 'Add two bath towels to the shopping cart'],
    );
    assert.deepEqual(
      tasks.map((t) => t.task_id),
      [1_100_000, 1_100_001],
    );
    assert.deepEqual(tasks[0]!.eval.eval_types, ['string_match']);
    assert.equal('eval' in tasks[1]!, false, 'a task the model gave no evaluator keeps none (the ORM scores it)');
    assert.ok(tasks.every((t) => t.sites[0] === 'shopping'));
    const record = await stack.store.getJson<{ generated: number; duplicates: string[]; failures: { reason: string }[] }>(
      ctx.key(generating, 'tasks', 'generation.json'),
    );
    assert.equal(record.generated, 2);
    assert.deepEqual(record.duplicates, [knownTask.intent]);
    assert.ok(record.failures.some((f) => /repeats an existing task/.test(f.reason)));
    assert.ok(record.failures.some((f) => /is not on shopping/.test(f.reason)));
    assert.ok(record.failures.some((f) => /item 5/.test(f.reason)));
  });

  /** A chat ORM that says YES to intents with "Buy", garbage to "refund", and NO otherwise. */
  const chatOrm = () =>
    server((request) => {
      const text = userText(request);
      if (text.includes('refund')) return { json: chatCompletion('maybe', MODEL, [{ token: 'maybe', logprob: -0.1 }]) };
      const yes = text.includes('Buy');
      return {
        json: chatCompletion(yes ? 'YES' : 'NO', MODEL, [
          { token: 'YES', logprob: yes ? -0.1 : -2.5 },
          { token: 'NO', logprob: yes ? -2.5 : -0.1 },
        ]),
      };
    });

  /** One stored one-step trajectory per item, in one rollout shard of `phase`. */
  async function rolloutShard(phase: PhaseScope, items: { intent: string; score: number; graded: boolean }[]) {
    const rows: TrajectoryIndexRow[] = [];
    for (const [i, { intent, score, graded }] of items.entries()) {
      const trajectoryKey = ctx.key(phase, 'rollouts', 'train', 'shard-0000', 'trajectories', `${i}.json`);
      const record: TrajectoryRecord = {
        taskId: String(i),
        site: 'shopping',
        intent,
        score,
        graded,
        steps: 1,
        answer: 'done',
        reason: 'exit',
        traceKey: `${trajectoryKey}.trace`,
        rounds: [{ state: state(intent, 'x'), response: 'exit(message="done")' }],
      };
      await stack.store.putJson(trajectoryKey, record);
      rows.push({ taskId: String(i), site: 'shopping', trajectoryKey, traceKey: record.traceKey, score, steps: 1, answer: 'done', reason: 'exit' });
    }
    return { rows, shard: await ctx.writeDataset(ctx.key(phase, 'rollouts', 'train', 'shard-0000', 'index.jsonl'), rows) };
  }

  test('scoreWithOrm rewards trajectories from the chat ORM and records a malformed verdict as reward 0', async () => {
    const orm = await chatOrm();
    const { scope: phase } = await scope({ models: { orm: { backend: 'chat', ...endpoint(orm.url), topLogprobs: 5 } } });
    const intents = ['Buy the red mug', 'Count the open issues', 'Ask for a refund'];
    const { rows, shard } = await rolloutShard(
      phase,
      intents.map((intent, i) => ({ intent, score: i === 0 ? 1 : 0, graded: true })),
    );
    const activities = createTrainActivities({ ctx, roles: workerRoles(ctx) });
    const result = await run(activities.scoreWithOrm, { ...phase, shards: [shard], orm: 'unused/orm.onnx' });
    assert.equal(result.successes, 1);
    const rewards = await ctx.readDataset<RewardRow>(result.rewards);
    assert.deepEqual(
      rewards.map((r) => r.reward),
      [1, 0, 0],
    );
    assert.ok(rewards.every((r) => r.rewardFrom === 'orm'));
    assert.ok(rewards[0]!.pYes! > 0.9 && rewards[1]!.pYes! < 0.1);
    const failures = await stack.store.getJson<{ item: string; reason: string }[]>(ctx.key(phase, 'rewards-failures.json'));
    assert.equal(failures.length, 1);
    assert.equal(failures[0]!.item, rows[2]!.trajectoryKey);
    assert.match(failures[0]!.reason, /neither YES nor NO/);
    // The endpoint saw the ORM prompt for every trajectory.
    assert.equal(orm.requests.length, 3);
    assert.match(userText(orm.requests[0]!), /^The User Intent:\n/);
  });

  test('with campaign.reward = evaluator, graded trajectories take their score unjudged and ungraded ones the ORM verdict', async () => {
    const orm = await chatOrm();
    const { scope: phase } = await scope({ campaign: { reward: 'evaluator' }, models: { orm: { backend: 'chat', ...endpoint(orm.url), topLogprobs: 5 } } });
    const { shard } = await rolloutShard(phase, [
      // The ORM would say YES; the evaluator says it failed.
      { intent: 'Buy the red mug', score: 0, graded: true },
      { intent: 'Count the open issues', score: 1, graded: true },
      // No evaluator: the ORM's YES is the reward.
      { intent: 'Buy the blue mug', score: 0, graded: false },
    ]);
    const activities = createTrainActivities({ ctx, roles: workerRoles(ctx) });
    const result = await run(activities.scoreWithOrm, { ...phase, shards: [shard], orm: 'unused/orm.onnx' });
    const rewards = await ctx.readDataset<RewardRow>(result.rewards);
    assert.deepEqual(
      rewards.map((r) => [r.reward, r.rewardFrom]),
      [
        [0, 'evaluator'],
        [1, 'evaluator'],
        [1, 'orm'],
      ],
    );
    assert.equal(result.successes, 2);
    assert.deepEqual(
      rewards.map((r) => r.pYes === null),
      [true, true, false],
      'the reward does not need the ORM on graded trajectories: it does not judge them',
    );
    assert.equal(orm.requests.length, 1);
    assert.match(userText(orm.requests[0]!), /Buy the blue mug/);
  });

  test('the external trainer trains the critic under the standard key; a non-zero exit fails clearly', async () => {
    const command = `${process.execPath} ${FAKE_TRAINER} --data {data} --init {init} --out {out}`;
    const { scope: phase } = await scope({ models: { trainer: { backend: 'external', command } } });
    const experience = await ctx.writeDataset(ctx.key(phase, 'experience.jsonl'), [{ a: 1 }, { a: 2 }, { a: 3 }]);
    const init = 'campaigns/backends-init/critic.onnx';
    await stack.store.putJson(init, { weights: 'previous' });
    const activities = createTrainActivities({ ctx, roles: workerRoles(ctx) });
    const result = await run(activities.trainCritic, { ...phase, experience, critic: init });
    const key = ctx.key(phase, 'checkpoints', 'critic.onnx');
    assert.equal(result.critic, key);
    const manifest = await stack.store.readManifest<{ key: string }>(manifestKey(key));
    assert.deepEqual(manifest?.objects.map((o) => o.key).sort(), [`${key}.files.json`, `${key}/model.onnx`, `${key}/tokenizer/vocab.json`]);
    const log = await stack.store.getJson<{ logTail: string[] }>(`${key}.trainer-log.json`);
    assert.ok(log.logTail.includes('loaded 3 examples'));
    // An embedded actor's experience goes as it is; the objective's settings go in the environment.
    for (const line of [
      'first example: a',
      'WEBRL_TRAIN_DATA_FORMAT=examples',
      'WEBRL_TRAIN_GAMMA=0.9',
      'WEBRL_TRAIN_RECORD_SCHEMA_VERSION=1',
      'WEBRL_TRAIN_BETA_HIGH=5',
    ]) {
      assert.ok(log.logTail.includes(line), line);
    }
    // No learning rate configured: the trainer picks its own per objective.
    assert.ok(!log.logTail.some((line) => line.startsWith('WEBRL_TRAIN_LEARNING_RATE=')));

    const failing = await scope({ models: { trainer: { backend: 'external', command: `${command} --mode fail` } } });
    const data = await ctx.writeDataset(ctx.key(failing.scope, 'experience.jsonl'), [{ a: 1 }]);
    await assert.rejects(run(activities.trainCritic, { ...failing.scope, experience: data, critic: init }), /exited with code 1[\s\S]*CUDA out of memory/);
    assert.equal(await stack.store.readManifest(manifestKey(ctx.key(failing.scope, 'checkpoints', 'critic.onnx'))), undefined);
  });

  test('a curriculum phase with no failures to evolve from is topped up with unasked train tasks', async () => {
    const { scope: phase, config } = await scope({}, 2);
    const failedTasks = await ctx.writeDataset(ctx.key({ ...phase, phase: 1 }, 'failed-tasks.jsonl'), []);
    const tasks = await ctx.readDataset<WebArenaTask>(
      await run(createControlActivities({ ctx, roles: workerRoles(ctx) }).generateTasks, { ...phase, failedTasks, count: 5, curriculum: true }),
    );
    const trainIntents = new Set(embeddedSplit(config.campaign.environment.worldSeed, 'train').map((t) => t.intent));
    assert.equal(tasks.length, 5);
    assert.ok(tasks.every((t) => trainIntents.has(t.intent)));
  });

  test("phase 0's probe gives every template of the train split an equal share", async () => {
    const { scope: phase, config } = await scope({}, 0);
    const templates = new Set(embeddedSplit(config.campaign.environment.worldSeed, 'train').map(taskTemplate));
    const count = templates.size + 3;
    const probe = await ctx.readDataset<WebArenaTask>(
      await run(createControlActivities({ ctx, roles: workerRoles(ctx) }).generateTasks, { ...phase, failedTasks: null, count, curriculum: false }),
    );
    assert.equal(probe.length, count);
    const perTemplate = new Map<string, number>();
    for (const task of probe) perTemplate.set(taskTemplate(task), (perTemplate.get(taskTemplate(task)) ?? 0) + 1);
    assert.equal(perTemplate.size, templates.size, 'every template drawn');
    assert.deepEqual([...new Set(perTemplate.values())].sort(), [1, 2], 'one or two of each');
  });

  test("phase 0 refits the embedded ORM and critic with the probe's graded outcomes added; a remote ORM is kept", async () => {
    const { scope: phase } = await scope({}, 0);
    const ormExamples = await ctx.writeDataset(ctx.key(phase, 'demonstrations', 'orm.jsonl'), [
      { state: state('Buy the red mug', 'done'), success: true },
      { state: state('Buy the red mug', 'N/A'), success: false },
    ]);
    const criticExamples = await ctx.writeDataset(ctx.key(phase, 'demonstrations', 'critic.jsonl'), [
      { state: state('Buy the red mug', 'done'), mcReturn: 1 },
      { state: state('Buy the red mug', 'N/A'), mcReturn: 0 },
    ]);
    const { shard } = await rolloutShard(phase, [
      { intent: 'Count the open issues', score: 1, graded: true },
      { intent: 'Ask for a refund', score: 0, graded: true },
      // No evaluator, no label: left out.
      { intent: 'Buy the blue mug', score: 0, graded: false },
    ]);
    const given = { orm: 'campaigns/x/phase-0/checkpoints/orm.onnx', critic: 'campaigns/x/phase-0/checkpoints/critic.onnx' };
    const activities = createTrainActivities({ ctx, roles: workerRoles(ctx) });
    const input = { ...phase, shards: [shard], ormExamples, criticExamples, ...given };
    const fitted = await run(activities.fitOrmAndCriticToProbe, input);
    assert.equal(fitted.outcomes, 2);
    assert.equal(fitted.orm, ctx.key(phase, 'checkpoints', 'orm-probe-fit.onnx'));
    assert.equal(fitted.critic, ctx.key(phase, 'checkpoints', 'critic-probe-fit.onnx'));
    for (const [model, data, examples] of [
      [fitted.orm, 'orm.jsonl', 4],
      [fitted.critic, 'critic.jsonl', 4],
    ] as const) {
      const card = await stack.store.getJson<{ training: { data: string[]; examples: number } }>(model.replace(/\.onnx$/, '.json'));
      assert.deepEqual(card.training.data, [ctx.key(phase, 'probe-fit', data)]);
      assert.equal(card.training.examples, examples, `${model}: SFT examples + the two graded outcomes (one step each)`);
    }
    assert.deepEqual(await run(activities.fitOrmAndCriticToProbe, input), fitted, 'a retry returns the published models');

    const orm = await chatOrm();
    const { scope: remote } = await scope({ models: { orm: { backend: 'chat', ...endpoint(orm.url), topLogprobs: 5 } } }, 0);
    const remoteShard = await rolloutShard(remote, [{ intent: 'Count the open issues', score: 1, graded: true }]);
    const kept = await run(activities.fitOrmAndCriticToProbe, { ...remote, shards: [remoteShard.shard], ormExamples, criticExamples, ...given });
    assert.equal(kept.orm, given.orm, 'a remote ORM is not refitted');
    assert.equal(kept.critic, ctx.key(remote, 'checkpoints', 'critic-probe-fit.onnx'));
  });

  test('training on an empty experience set keeps the models it was given', async () => {
    const { scope: phase } = await scope({});
    const experience = await ctx.writeDataset(ctx.key(phase, 'experience.jsonl'), []);
    const train = createTrainActivities({ ctx, roles: workerRoles(ctx) });
    const models = { critic: 'campaigns/x/phase-0/checkpoints/critic.onnx', actor: 'campaigns/x/phase-0/checkpoints/actor.onnx' };
    assert.deepEqual(await run(train.trainCritic, { ...phase, experience, critic: models.critic }), { critic: models.critic, steps: 0 });
    assert.deepEqual(await run(train.trainActor, { ...phase, experience, actor: models.actor, critic: models.critic }), { actor: models.actor, steps: 0 });
  });
  test('the train activities run on injected roles: fakes for the ORM, the actor and the trainer, no models config, no keys', async () => {
    // The stored config is the defaults (the activities still read the campaign's training settings);
    // nothing resolves a backend from it: every model call goes to the roles given here.
    const { scope: phase, config } = await scope({});
    const calls: string[] = [];
    const trained: { spec: TrainSpec; target: TrainingTarget }[] = [];
    const fakes: ModelRoles = {
      actor: {
        prompts: createPromptBuilder(webrlLlama3Format),
        policies: () => Promise.reject(new Error('no rollouts on the train queue')),
        async logProbs(checkpoint, items) {
          calls.push(`actor.logProbs ${checkpoint} ${items.length}`);
          // The second step cannot be scored: null, and recorded.
          return {
            logProbs: items.map((_, i) => (i === 1 ? null : { logProb: -1, tokens: 2, meanTokenLogProb: -0.5, inCandidates: true })),
            failures: items.length > 1 ? [{ item: items[1]!.id, reason: 'fake: unscorable' }] : [],
          };
        },
      },
      orm: {
        trainedByCampaign: true,
        async judge(checkpoint, items) {
          calls.push(`orm.judge ${checkpoint} ${items.length}`);
          return {
            verdicts: items.map((item) => (item.state.intent.includes('refund') ? null : { pYes: 0.9, reward: 1 })),
            failures: [{ item: items[2]!.id, reason: 'fake: no verdict' }],
          };
        },
      },
      critic: { valuesTasks: true, trainedByCampaign: true, values: () => Promise.reject(new Error('no critic on these activities')) },
      trainer: {
        async train(spec, target) {
          trained.push({ spec, target });
          const object = await stack.store.putJson(target.key, { trainedBy: 'fake', data: spec.data.key });
          return { steps: 3, objects: [object], metrics: TRAINED };
        },
      },
      taskGenerator: undefined,
      feasibility: undefined,
      serving: undefined,
    };
    const activities = createTrainActivities({ ctx, roles: () => fakes });
    const orm = 'campaigns/x/phase-0/checkpoints/orm.onnx';
    const { rows, shard } = await rolloutShard(phase, [
      { intent: 'Buy the red mug', score: 1, graded: true },
      { intent: 'Count the open issues', score: 0, graded: true },
      { intent: 'Ask for a refund', score: 0, graded: true },
    ]);
    const scored = await run(activities.scoreWithOrm, { ...phase, shards: [shard], orm });
    const rewards = await ctx.readDataset<RewardRow>(scored.rewards);
    assert.deepEqual(
      rewards.map((r) => r.reward),
      [1, 1, 0],
      'the fake verdicts; no verdict is reward 0',
    );
    assert.deepEqual(await stack.store.getJson(ctx.key(phase, 'rewards-failures.json')), [{ item: rows[2]!.trajectoryKey, reason: 'fake: no verdict' }]);

    const tasks = await ctx.writeDataset(ctx.key(phase, 'tasks', 'kept.jsonl'), []);
    const actor = 'campaigns/x/phase-0/checkpoints/actor.onnx';
    const filtered = await run(activities.filterExperience, { ...phase, rewards: scored.rewards, tasks, replayBuffer: null, actor, rankBand: [0, 1], cap: 1 });
    assert.equal(filtered.currentSteps, 3);
    const records = await ctx.readDataset<{ refLogprob: number | null }>({ ...filtered.experience, key: trainingRecordsKey(filtered.experience.key) });
    assert.equal(records.length, 3, 'an actor trained from records gets them beside the experience');
    assert.deepEqual(
      records.map((r) => r.refLogprob),
      [-1, null, -1],
      'the unscorable step has a null reference log-prob',
    );
    assert.equal((await stack.store.getJson<unknown[]>(ctx.key(phase, 'replay-logprob-failures.json'))).length, 1);

    const critic = 'campaigns/x/phase-0/checkpoints/critic.onnx';
    const trainedActor = await run(activities.trainActor, { ...phase, experience: filtered.experience, actor, critic });
    assert.deepEqual(trainedActor, { actor: ctx.key(phase, 'checkpoints', 'actor.onnx'), steps: 3 });
    assert.equal(trained.length, 1);
    const { epochs, ...spec } = trained[0]!.spec;
    assert.equal(epochs, config.campaign.training.actorEpochs);
    assert.deepEqual(spec, {
      scope: { ...phase, experience: filtered.experience, actor, critic },
      name: 'actor',
      objective: 'actor-webrl',
      data: filtered.experience,
      init: actor,
      reference: actor,
      critic,
    });
    assert.deepEqual(trained[0]!.target, {
      key: trainedActor.actor,
      stateKey: ctx.key(phase, 'checkpoints', 'actor.train-state'),
      training: config.campaign.training,
    });
    assert.deepEqual(
      await run(activities.trainActor, { ...phase, experience: filtered.experience, actor, critic }),
      trainedActor,
      'published once: not trained again',
    );
    assert.equal(trained.length, 1);
    assert.deepEqual(calls, [`orm.judge ${orm} 3`, `actor.logProbs ${actor} 3`]);

    // The phase manifest carries what the actor's training did, and the report shows it.
    const control = createControlActivities({ ctx, roles: () => fakes });
    const published = await run(control.publishPhase, {
      ...phase,
      carry: { models: { actor: trainedActor.actor, critic, orm }, failedTasks: filtered.failedTasks, replayBuffer: filtered.replayBuffer },
      evaluation: ctx.key(phase, 'evaluation.json'),
      tasks,
      rewards: scored.rewards,
      experience: filtered.experience,
      numbers: { successRate: 0, perSite: {}, tasksGenerated: 0, tasksKept: 0, trajectories: 3, rolloutSuccesses: 2, trainingSteps: 3, replayedSteps: 0 },
    });
    const manifest = (await stack.store.readManifest<PhaseManifestData>(published.manifestKey))!.data;
    assert.deepEqual(manifest.training, { actor: TRAINED });
    assert.equal(
      renderActorTrainingText([manifest, { ...manifest, phase: 2, training: { actor: null } }])
        .split('\n')
        .slice(1)
        .join('\n'),
      [
        'phase 1: actor-webrl, 3 optimizer steps, 1 skipped (no loss row); positive rows 1 / 0 / 2 / 0 of 3; KL/token mean 0.012, max |0.030|',
        'phase 2: n/a (the actor was not trained, or its trainer did not tell)',
      ].join('\n'),
    );
  });

  test('phase 0 scores no reference log-probs; replayDemonstrations starts the buffer with the oracle demonstrations, replayed as demonstrations whatever their perplexity; the critic trains without them', async () => {
    const { scope: phase0 } = await scope({ campaign: { training: { replayDemonstrations: true } } }, 0);
    const phase1 = { ...phase0, phase: 1 };
    const scored: number[] = [];
    const trainedOn: DatasetRef[] = [];
    const roles = (config: Config): ModelRoles => ({
      ...workerRoles(ctx)(config),
      trainer: {
        async train(spec, target) {
          trainedOn.push(spec.data);
          return { steps: 1, objects: [await stack.store.putJson(target.key, { trainedBy: 'fake' })], metrics: null };
        },
      },
      actor: {
        prompts: createPromptBuilder(webrlLlama3Format),
        policies: () => Promise.reject(new Error('no rollouts on the train queue')),
        async logProbs(_checkpoint, items) {
          scored.push(items.length);
          return { logProbs: items.map(() => ({ logProb: -1, tokens: 2, meanTokenLogProb: -0.5, inCandidates: true })), failures: [] };
        },
      },
    });
    // Two oracle episodes of phase 0: one solved its task (a demonstration), one did not.
    for (const [taskId, score] of [
      ['7', 1],
      ['8', 0],
    ] as const) {
      const key = `${ctx.key(phase0, 'demonstrations', 'oracle')}/trajectories/${taskId}.json`;
      const rounds = [
        { state: state(`Task ${taskId}`, 'a'), response: 'do(action="Click", element="1")' },
        { state: state(`Task ${taskId}`, 'b'), response: 'exit(message="done")' },
      ];
      await stack.store.putJson(key, {
        taskId,
        site: 'shopping',
        intent: `Task ${taskId}`,
        score,
        graded: true,
        steps: 2,
        answer: 'done',
        reason: 'exit',
        traceKey: `${key}.trace`,
        rounds,
      });
    }
    const train = createTrainActivities({ ctx, roles });
    const filter = async (phase: PhaseScope, replayBuffer: DatasetRef | null, rankBand: [number, number]) => {
      const { rows } = await rolloutShard(phase, [{ intent: 'Buy the red mug', score: 0, graded: true }]);
      const rewards = await ctx.writeDataset(
        ctx.key(phase, 'rewards.jsonl'),
        rows.map((row) => ({ ...row, reward: 0, rewardFrom: 'evaluator', pYes: null, graded: true })),
      );
      const tasks = await ctx.writeDataset(ctx.key(phase, 'tasks', 'kept.jsonl'), []);
      return run(train.filterExperience, { ...phase, rewards, tasks, replayBuffer, actor: 'a.onnx', rankBand, cap: 10 });
    };
    const zero = await filter(phase0, null, [0, 1]);
    assert.deepEqual(scored, [], 'phase 0 trains no actor on its probe: nothing scored');
    assert.equal(await stack.store.exists(trainingRecordsKey(zero.experience.key)), false);
    const buffer = await ctx.readDataset<ExperienceRow>(zero.replayBuffer);
    assert.deepEqual(
      buffer.map((row) => [row.taskId, row.step, row.origin, row.trajectoryReward]),
      [
        ['7', 0, 'demonstration', 1],
        ['7', 1, 'demonstration', 1],
      ],
    );
    // An earlier phase's success beside them; every row's rank is exp(-0.5) = 0.61, below the band.
    const success: ExperienceRow = { ...buffer[1]!, taskId: '9', origin: undefined };
    const withSuccess = await ctx.writeDataset(ctx.key(phase1, 'buffer-in.jsonl'), [...buffer, success]);
    const one = await filter(phase1, withSuccess, [0.7, 0.95]);
    assert.deepEqual(scored, [4], 'phase 1: the buffer (replay band) and its own step (reference)');
    const records = await ctx.readDataset<TrainingStepRecord>({ ...one.experience, key: trainingRecordsKey(one.experience.key) });
    assert.deepEqual(
      records.map((record) => record.source),
      ['rollout', 'demonstration', 'demonstration'],
      'the demonstrations replayed out of the band, the success not',
    );

    // The critic values what the actor achieves: it trains on the phase's own step alone, rows and records.
    const critic = await run(train.trainCritic, { ...phase1, experience: one.experience, critic: 'critic-0.onnx' });
    assert.equal(critic.critic, ctx.key(phase1, 'checkpoints', 'critic.onnx'));
    const [criticData] = trainedOn;
    assert.equal(criticData!.count, 1);
    assert.deepEqual(
      (await ctx.readDataset<ExperienceRow>(criticData!)).map((row) => [row.taskId, row.origin]),
      [[(await ctx.readDataset<ExperienceRow>(one.experience))[0]!.taskId, undefined]],
    );
    assert.deepEqual(
      (await ctx.readDataset<TrainingStepRecord>({ ...criticData!, key: trainingRecordsKey(criticData!.key) })).map((record) => record.source),
      ['rollout'],
    );
    // Nothing of the actor's own: the critic stays as it was.
    const onlyDemonstrations = await ctx.writeDataset(
      ctx.key({ ...phase1, phase: 2 }, 'experience.jsonl'),
      (await ctx.readDataset<ExperienceRow>(one.experience)).filter((row) => row.origin === 'demonstration'),
    );
    assert.deepEqual(await run(train.trainCritic, { ...phase1, phase: 2, experience: onlyDemonstrations, critic: 'critic-1.onnx' }), {
      critic: 'critic-1.onnx',
      steps: 0,
    });
    assert.equal(trainedOn.length, 1);
  });
});
