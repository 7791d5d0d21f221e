/**
 * Campaign activities with a remote actor (OpenAI-compatible completions) and a user-supplied ONNX
 * critic file, run directly in a mock activity context over the real MinIO, with real Chromium on the
 * embedded sites. A local protocol server stands in for the LLM: it reads the WebRL prompt (intent,
 * round, observation) and answers as a model would, so the actions it writes are executed for real.
 */
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Observation } from '../browser/contract';
import type { TraceRow } from '../browser/traces';
import { createBrowserActivities } from '../activities/campaign/browserActivities';
import { BrowserRuntime } from '../activities/campaign/browserRuntime';
import { CampaignContext } from '../activities/campaign/context';
import { createControlActivities } from '../activities/campaign/controlActivities';
import type { TrajectoryIndexRow, TrajectoryRecord } from '../activities/campaign/episodes';
import { ModelCache } from '../activities/campaign/models';
import type { ExperienceRow } from '../activities/campaign/experience';
import type { RewardRow } from '../activities/campaign/trainActivities';
import { statePrompt } from '../models/remote/completionsActor';
import { createPromptBuilder } from '../browser/policies/promptBudget';
import { webrlLlama3Format } from '../browser/policies/promptFormat';
import { trainingRecordSchema, trainingRecordsKey, type TrainingStepRecord } from '../models/train/trainingRecord';
import { createTrainActivities } from '../activities/campaign/trainActivities';
import { parseConfig } from '../config/load';
import type { Config } from '../config/campaignConfig';
import { EmbeddedEnvironment, toEpisodeTask } from '../env/embedded';
import type { WebArenaTask } from '../env/tasks/schema';
import { freePort } from '../infra/processes';
import type { Actor } from '../models/actor';
import { inMemoryModel, networkShape, saveModel } from '../models/checkpoint';
import { Critic } from '../models/critic';
import { createNetwork, PARAMETER_NAMES } from '../models/network';
import { SeededRng } from '../browser/rng';
import type { ModelState } from '../models/state';
import type { DatasetRef, PhaseScope } from '../storage/keys';
import { activityRunner } from './harness/activityContext';
import { startTestStack, type TestStack } from './harness/stack';
import { workerRoles } from './harness/roles';
import { embeddedSplit } from '../env/backends/embedded';
import { embeddedSitesOf } from '../env/backends/embedded/workerSites';
import {
  chatCompletion,
  echoCompletion,
  promptLogprobsCompletion,
  readActorPrompt,
  startServer,
  textCompletion,
  type RecordedRequest,
  type Reply,
  type TestServer,
} from './models/fixtures/servers';

const FAKE_TRAINER = fileURLToPath(new URL('./models/fixtures/fakeTrainer.mjs', import.meta.url));
const MODEL = 'webrl-llama-test';
/** A completions actor needs an external trainer (config/schema.ts); these tests never train. */
const TRAINER = { backend: 'external', command: `${process.execPath} ${FAKE_TRAINER} --data {data} --out {out}` };
/** Where the ONNX actor would be: nothing is stored there, and the model cache refuses it anyway. */
const NO_ACTOR = 'campaigns/nowhere/actor.onnx';

const run = activityRunner();

/** A model cache for campaigns whose actor is remote: asking it for the ONNX actor is the bug. */
class RemoteActorModels extends ModelCache {
  actorRequests = 0;
  override actor(key: string): Promise<Actor> {
    this.actorRequests++;
    return Promise.reject(new Error(`the ONNX actor ${key} was loaded for a campaign with a remote actor`));
  }
}

/** What the completions policy sends, read back: the task's intent, the round, the current page. */
function readPrompt(request: RecordedRequest): { intent: string; round: number; html: string; body: Record<string, unknown> } {
  const body = request.body as Record<string, unknown>;
  return { ...readActorPrompt(String(body.prompt)), body };
}

/** The model's answer to a "search the store" task: type the query into the search box, then exit. */
function searchPlan(query: string, round: number, html: string): string {
  if (round > 0) return 'exit(message="Done")';
  const box = /<input id="(\d+)"[^>]*placeholder="Search entire store/.exec(html);
  // Thrown here it would crash the server, not fail the test: a lost model fails the task instead.
  if (!box) return 'I cannot find a search box on this page.';
  return `# Element: the search box\ndo(action="Search", argument="${query}", element="${box[1]}")`;
}

describe('campaign activities with a remote completions actor and an ONNX-file critic', () => {
  let stack: TestStack;
  let ctx: CampaignContext;
  let runtime: BrowserRuntime;
  let sitePorts: Record<string, number>;
  const servers: TestServer[] = [];
  let campaigns = 0;

  before(async () => {
    stack = await startTestStack();
    ctx = new CampaignContext(stack.store, join(stack.dir, 'work'));
    // Free ports: the default WebArena ports may be taken by another test run on this machine.
    sitePorts = { shopping: await freePort(), shopping_admin: await freePort(), reddit: await freePort(), gitlab: await freePort() };
    // One browser and one embedded world for every test; the world seed is the same in every config.
    runtime = await BrowserRuntime.start(parseConfig({ sites: { ports: sitePorts }, concurrency: { browserContexts: 1 } }));
  });
  after(async () => {
    await Promise.all(servers.map((server) => server.close()));
    await runtime?.close();
    await stack?.stop();
  });

  async function server(handle: (request: RecordedRequest) => Reply): Promise<TestServer> {
    const started = await startServer(handle);
    servers.push(started);
    return started;
  }

  /** Stores a frozen campaign config and returns a phase scope that names it. */
  async function scope(raw: Record<string, unknown>): Promise<{ scope: PhaseScope; config: Config }> {
    const config = parseConfig({ ...raw, sites: { ports: sitePorts }, concurrency: { browserContexts: 1 }, s3: stack.config.s3, stack: stack.config.stack });
    const campaignId = `remote-${++campaigns}`;
    const configKey = `campaigns/${campaignId}/config.json`;
    await stack.store.putJson(configKey, config);
    return { scope: { campaignId, configKey, phase: 1, seed: 7 }, config };
  }

  const actorConfig = (url: string, extra: Record<string, unknown> = {}) => ({
    backend: 'completions',
    baseUrl: `${url}/v1`,
    model: MODEL,
    maxAttempts: 1,
    retryDelayMs: 0,
    timeoutMs: 10_000,
    // These scripted servers have no /tokenize: the prompts keep webrl-llama3's character budget only.
    contextTokens: 'off',
    ...extra,
  });

  async function trajectories(ref: DatasetRef): Promise<{ row: TrajectoryIndexRow; record: TrajectoryRecord; trace: TraceRow[] }[]> {
    const rows = await ctx.readDataset<TrajectoryIndexRow>(ref);
    return Promise.all(
      rows.map(async (row) => {
        const trace: TraceRow[] = [];
        for await (const step of stack.store.readJsonl<TraceRow>(row.traceKey)) trace.push(step);
        return { row, record: await stack.store.getJson<TrajectoryRecord>(row.trajectoryKey), trace };
      }),
    );
  }

  test('runRolloutShard rolls out with the completions actor: answered actions run, garbage is a failed step', async () => {
    const train = embeddedSplit(parseConfig({}).campaign.environment.worldSeed, 'train');
    const search = train.find((t) => t.intent === 'Search for "racing wheel"')!;
    const price = train.find((t) => t.sites[0] === 'shopping' && t.intent.startsWith('What is the price of'))!;
    const actor = await server((request) => {
      const { intent, round, html, body } = readPrompt(request);
      if (intent === search.intent) return { json: textCompletion(searchPlan('racing wheel', round, html), String(body.model)) };
      // A model that rambles first (no action in the grammar), then gives up.
      return { json: textCompletion(round === 0 ? 'I think I should look at the page first. Let me see.' : 'exit(message="N/A")', String(body.model)) };
    });
    const { scope: phase } = await scope({
      campaign: { environment: { maxSteps: 4 } },
      models: { actor: actorConfig(actor.url, { maxTokens: 256 }), trainer: TRAINER },
    });
    const tasks = await ctx.writeDataset(ctx.key(phase, 'tasks', 'kept.jsonl'), [search, price]);
    const models = new RemoteActorModels(ctx);
    const activities = createBrowserActivities({ ctx, runtime, roles: workerRoles(ctx, models) });
    const input = { ...phase, purpose: 'train' as const, tasks, shard: 0, offset: 0, limit: 2, actor: NO_ACTOR, temperature: 0.7 };
    const result = await run(activities.runRolloutShard, input);
    assert.equal(result.trajectories.count, 2);
    assert.equal(models.actorRequests, 0, 'the ONNX actor is never loaded');

    const [good, garbage] = await trajectories(result.trajectories);
    assert.equal(good!.row.taskId, String(search.task_id));
    assert.deepEqual([good!.record.score, good!.record.graded, good!.record.reason, good!.record.steps, good!.record.answer], [1, true, 'exit', 2, 'Done']);
    assert.equal(good!.trace[0]!.action?.kind, 'Search');
    assert.deepEqual(good!.trace[0]!.execution, { ok: true });
    assert.match(good!.trace[1]!.url, /catalogsearch\/result\/\?q=racing\+wheel/);
    // The recorded rounds are what the trainer and ORM read: the states shown and the raw replies.
    assert.equal(good!.record.rounds.length, 2);
    assert.match(good!.record.rounds[0]!.response, /^# Element: the search box\ndo\(action="Search"/);
    assert.equal(good!.record.rounds[1]!.state.history[0]!.response, good!.record.rounds[0]!.response);

    assert.equal(garbage!.row.taskId, String(price.task_id));
    assert.deepEqual([garbage!.record.score, garbage!.record.reason, garbage!.record.steps], [0, 'exit', 2]);
    assert.equal(garbage!.trace[0]!.action, null);
    assert.ok(garbage!.trace[0]!.parse_error, 'the unparseable reply is a recorded parse failure');
    assert.equal(garbage!.trace[0]!.execution, null);
    assert.equal(garbage!.record.rounds[0]!.response, 'I think I should look at the page first. Let me see.');

    // The endpoint got the WebRL prompt with the rollout's sampling settings.
    assert.equal(actor.requests.length, 4);
    const body = actor.requests[0]!.body as Record<string, unknown>;
    assert.equal(actor.requests[0]!.url, '/v1/completions');
    assert.deepEqual([body.model, body.temperature, body.top_p, body.top_k, body.max_tokens, body.stop], [MODEL, 0.7, 1, -1, 256, ['<|eot_id|>']]);
    assert.ok(String(body.prompt).endsWith('<|start_header_id|>assistant<|end_header_id|>\n'));

    // A retried shard returns the published result without asking the model again.
    assert.deepEqual(await run(activities.runRolloutShard, input), result);
    assert.equal(actor.requests.length, 4);
  });

  test('filterExperience scores replay log-probs on the completions actor and records an unscorable row', async () => {
    // The toy model: every prompt token costs a fixed log-prob that the replayed intent picks.
    const logprobOf = (intent: string) => (intent.includes('alien') ? -3 : intent.includes('mastered') ? -0.001 : -0.1);
    const scorer = await server((request) => {
      const body = request.body as { prompt: string; model: string; echo?: boolean };
      const intent = /^Task Instruction: (.*)\n/.exec(body.prompt)?.[1] ?? '';
      if (intent.includes('overlong')) {
        return { status: 400, json: { error: { message: "This model's maximum context length is 8192 tokens", type: 'invalid_request_error' } } };
      }
      const lp = logprobOf(intent);
      if (body.echo) {
        const reply = echoCompletion(body.prompt, body.model);
        const logprobs = reply.choices[0]!.logprobs;
        logprobs.token_logprobs = logprobs.token_logprobs.map((value) => (value === null ? null : lp));
        return { json: reply };
      }
      const reply = promptLogprobsCompletion(body.prompt, body.model, { tokenIds: true });
      for (const entry of reply.choices[0]!.prompt_logprobs) for (const token of Object.values(entry ?? {}) as { logprob: number }[]) token.logprob = lp;
      return { json: reply };
    });

    const page = (text: string) => ({ url: 'http://127.0.0.1/', title: 'page', html: `<html><body>${text}</body></html>`, elements: [] }) as Observation;
    const state = (intent: string, history: string[] = []): ModelState => ({
      intent,
      history: history.map((response) => ({ response, action: null })),
      observation: page(intent),
    });
    const replayRow = (taskId: string, intent: string): ExperienceRow => ({
      taskId,
      state: state(intent),
      response: 'do(action="Click", element="3")',
      nextState: null,
      reward: 1,
      mcReturn: 1,
    });
    const buffer = [
      replayRow('900', 'a familiar replayed task'),
      replayRow('901', 'an alien replayed task'),
      replayRow('902', 'a mastered replayed task'),
      replayRow('903', 'an overlong replayed task'),
    ];

    for (const mode of ['echo', 'prompt_logprobs'] as const) {
      const { scope: phase, config } = await scope({ models: { actor: actorConfig(scorer.url, { mode }), trainer: TRAINER } });
      const [won, lost] = embeddedSplit(config.campaign.environment.worldSeed, 'train').slice(0, 2) as [WebArenaTask, WebArenaTask];
      const rollouts: [WebArenaTask, number, string[]][] = [
        [won, 1, ['do(action="Click", element="1")', 'exit(message="42")']],
        [lost, 0, ['exit(message="N/A")']],
      ];
      const rewards: RewardRow[] = [];
      for (const [task, reward, responses] of rollouts) {
        const trajectoryKey = ctx.key(phase, 'rollouts', 'train', 'shard-0000', 'trajectories', `${task.task_id}.json`);
        const record: TrajectoryRecord = {
          taskId: String(task.task_id),
          site: 'shopping',
          intent: task.intent,
          score: reward,
          graded: true,
          steps: responses.length,
          answer: null,
          reason: 'exit',
          traceKey: `${trajectoryKey}.trace`,
          rounds: responses.map((response, t) => ({ state: state(task.intent, responses.slice(0, t)), response })),
        };
        await stack.store.putJson(trajectoryKey, record);
        rewards.push({
          taskId: record.taskId,
          site: 'shopping',
          trajectoryKey,
          reward,
          rewardFrom: 'orm',
          pYes: reward ? 0.9 : 0.1,
          score: reward,
          graded: true,
        });
      }
      const before = scorer.requests.length;
      const models = new RemoteActorModels(ctx);
      const activities = createTrainActivities({ ctx, roles: workerRoles(ctx, models) });
      const result = await run(activities.filterExperience, {
        ...phase,
        rewards: await ctx.writeDataset(ctx.key(phase, 'rewards.jsonl'), rewards),
        tasks: await ctx.writeDataset(ctx.key(phase, 'tasks', 'kept.jsonl'), [won, lost]),
        replayBuffer: await ctx.writeDataset(ctx.key(phase, 'replay-in.jsonl'), buffer),
        actor: NO_ACTOR,
        rankBand: [0.5, 0.95],
        cap: 2,
      });
      assert.equal(models.actorRequests, 0, `${mode}: the ONNX actor is never loaded`);
      // Ranks: exp(-0.1) = 0.90 is in the band; exp(-3) is alien, exp(-0.001) mastered; 903 failed.
      assert.deepEqual([result.currentSteps, result.replayedSteps], [3, 1], mode);
      const experience = await ctx.readDataset<ExperienceRow>(result.experience);
      assert.deepEqual(
        experience.map((row) => row.taskId),
        [String(won.task_id), String(won.task_id), String(lost.task_id), '900'],
        mode,
      );
      const replay = await ctx.readDataset<ExperienceRow>(result.replayBuffer);
      assert.deepEqual(
        replay.map((row) => row.taskId),
        ['900', '901', '902', '903', String(won.task_id), String(won.task_id)],
        mode,
      );
      assert.deepEqual(
        (await ctx.readDataset<WebArenaTask>(result.failedTasks)).map((t) => t.task_id),
        [lost.task_id],
        mode,
      );
      const failures = await stack.store.getJson<{ item: string; reason: string }[]>(ctx.key(phase, 'replay-logprob-failures.json'));
      assert.equal(failures.length, 1, mode);
      assert.equal(failures[0]!.item, '903#3');
      assert.match(failures[0]!.reason, /400[\s\S]*maximum context length/);

      // Every replayed and every current step was sent once, as the WebRL prompt followed by the action and its end of turn, in this mode.
      const prompts = createPromptBuilder(webrlLlama3Format);
      const sent = scorer.requests.slice(before).map((request) => request.body as Record<string, unknown>);
      assert.equal(sent.length, buffer.length + result.currentSteps, mode);
      const current = experience.slice(0, result.currentSteps);
      assert.deepEqual(
        sent.map((body) => body.prompt).sort(),
        (await Promise.all([...buffer, ...current].map(async (row) => `${await statePrompt(prompts, row.state)}${row.response}<|eot_id|>`))).sort(),
        mode,
      );
      for (const body of sent) {
        if (mode === 'echo') assert.deepEqual([body.echo, body.logprobs, body.max_tokens], [true, 1, 0]);
        else assert.deepEqual([body.prompt_logprobs, body.max_tokens, body.return_token_ids], [0, 1, true]);
      }

      // The training records beside the experience: the same steps, with the exact prompt text, WebRL's
      // Monte-Carlo return and the log-probs under the actor the phase trains from.
      const records = (await ctx.readDataset<unknown>({ ...result.experience, key: trainingRecordsKey(result.experience.key) })).map((row) =>
        trainingRecordSchema.parse(row),
      );
      assert.equal(records.length, experience.length, mode);
      const steps = records.filter((record) => record.kind === 'step');
      assert.deepEqual(
        steps.map((record) => [record.taskId, record.source, record.step, record.done, record.reward]),
        [
          [String(won.task_id), 'rollout', 0, false, 0],
          [String(won.task_id), 'rollout', 1, true, 1],
          [String(lost.task_id), 'rollout', 0, true, 0],
          ['900', 'replay', 0, true, 1],
        ],
        mode,
      );
      const [first, second] = steps as [TrainingStepRecord, TrainingStepRecord];
      assert.equal(first.prompt, await statePrompt(prompts, experience[0]!.state));
      assert.ok(
        sent.some((body) => body.prompt === `${first.prompt}${first.response}<|eot_id|>`),
        'the record holds the prompt the server scored',
      );
      assert.equal(first.nextPrompt, second.prompt);
      assert.equal(second.nextPrompt, null);
      assert.equal(first.id, `${first.traceId}:0`);
      // WebRL: every step carries the trajectory's score, discounted sums from each step on (gamma 0.9).
      assert.ok(Math.abs(first.mcReturn - 1.9) < 1e-12 && second.mcReturn === 1 && steps[2]!.mcReturn === 0, mode);
      for (const record of steps) {
        assert.ok(record.responseTokens! > 0 && record.refLogprob! < 0, mode);
        assert.ok(Math.abs(record.rank! - Math.exp(record.refLogprob! / record.responseTokens!)) < 1e-12, mode);
      }
      assert.ok(Math.abs(steps[3]!.rank! - Math.exp(-0.1)) < 1e-9, 'the replayed step keeps the rank it was filtered by');

      // The external trainer of a completions actor reads these records as {data}.
      const critic = ctx.key(phase, 'critic-in.onnx');
      await stack.store.putBytes(critic, 'weights');
      const trained = await run(activities.trainCritic, { ...phase, experience: result.experience, critic });
      const log = await stack.store.getJson<{ logTail: string[] }>(`${trained.critic}.trainer-log.json`);
      assert.ok(log.logTail.includes(`loaded ${records.length} examples`), mode);
      assert.ok(log.logTail.includes('WEBRL_TRAIN_DATA_FORMAT=training-records'), mode);
      assert.ok(log.logTail.includes('WEBRL_TRAIN_PROMPT_FORMAT=webrl-llama3'), 'the trainer is told how the prompts were written');
      assert.ok(!log.logTail.some((line) => line.startsWith('WEBRL_TRAIN_MAX_LENGTH')), "no configured context: the trainer uses the model's");
      assert.ok(
        log.logTail.some((line) => line.startsWith('first example: ') && line.includes('kind') && line.includes('nextPrompt')),
        mode,
      );
    }
  });

  test('phase 0 from WebRL’s SFT file and an init checkpoint: records in the model’s chat template (ChatML) go to the trainer', async () => {
    const dir = join(stack.dir, 'sft-start');
    await mkdir(join(dir, 'init'), { recursive: true });
    await writeFile(join(dir, 'init', 'adapter_config.json'), '{"r": 4}');
    // WebRL's web_policy_sft.json shape (LLaMA-Factory sharegpt): one entry of two steps, one of one step.
    const file = join(dir, 'web_policy_sft.json');
    await writeFile(
      file,
      JSON.stringify([
        {
          conversations: [
            { from: 'human', value: 'Task Instruction: Buy a lamp' },
            { from: 'gpt', value: 'do(action="Click", element="3")' },
            { from: 'human', value: 'Round 1' },
            { from: 'gpt', value: 'exit(message="done")' },
          ],
        },
        {
          conversations: [
            { from: 'system', value: 'You browse.' },
            { from: 'human', value: 'Task Instruction: Sell eggs' },
            { from: 'gpt', value: 'exit(message="sold")' },
          ],
        },
      ]),
    );
    const tokenizer = fileURLToPath(new URL('./models/fixtures/tokenizers/chatml', import.meta.url));
    const { scope: phase } = await scope({
      models: {
        actor: {
          ...actorConfig('http://127.0.0.1:9'),
          promptFormat: 'chat-template',
          tokenizer,
          sftData: { path: file, format: 'webrl-sharegpt' },
          init: { path: join(dir, 'init') },
        },
        trainer: { ...TRAINER, command: `${TRAINER.command} --init {init}` },
        // A served judge: nothing in the campaign reads an ORM checkpoint, so none is trained.
        orm: { backend: 'chat', baseUrl: 'http://127.0.0.1:9/v1', model: 'orm' },
      },
    });
    const phase0 = { ...phase, phase: 0 };
    const state: ModelState = {
      intent: 'Buy a lamp',
      history: [],
      observation: { url: 'http://shop/', title: 'Shop', html: '<button id="3"> Search </button>' },
    } as unknown as ModelState;
    const data = {
      demonstrations: await ctx.writeDataset(ctx.key(phase0, 'demonstrations', 'actor-sft.jsonl'), [{ state, response: 'do(action="Click", element="3")' }]),
      // Two steps of one trajectory, and a row stored before examples named their trajectory.
      criticExamples: await ctx.writeDataset(ctx.key(phase0, 'demonstrations', 'critic.jsonl'), [
        { state, mcReturn: 0.9, trajectory: 'traces/a.jsonl', step: 0 },
        { state, mcReturn: 1, trajectory: 'traces/a.jsonl', step: 1 },
        { state, mcReturn: 0 },
      ]),
      ormExamples: await ctx.writeDataset(ctx.key(phase0, 'demonstrations', 'orm.jsonl'), [{ state, success: true }]),
    };
    const train = createTrainActivities({ ctx, roles: workerRoles(ctx, new RemoteActorModels(ctx)) });
    const sft = await run(train.trainSft, { ...phase0, ...data });

    const records = (await ctx.readDataset<unknown>({ ...data.demonstrations, key: trainingRecordsKey(data.demonstrations.key) })).map(
      (row) => trainingRecordSchema.parse(row) as TrainingStepRecord,
    );
    const chat = (turns: string) => `${turns}<|im_start|>assistant\n`;
    assert.deepEqual(
      records.map((r) => [r.source, r.prompt, r.response]),
      [
        [
          'demonstration',
          chat(`<|im_start|>user\nTask Instruction: Buy a lamp\n\nRound 0\n\n<button id="3"> Search </button><|im_end|>\n`),
          'do(action="Click", element="3")',
        ],
        ['demonstration', chat(`<|im_start|>user\nTask Instruction: Buy a lamp<|im_end|>\n`), 'do(action="Click", element="3")'],
        [
          'demonstration',
          chat(
            `<|im_start|>user\nTask Instruction: Buy a lamp<|im_end|>\n<|im_start|>assistant\ndo(action="Click", element="3")<|im_end|>\n<|im_start|>user\nRound 1<|im_end|>\n`,
          ),
          'exit(message="done")',
        ],
        ['demonstration', chat('<|im_start|>system\nYou browse.<|im_end|>\n<|im_start|>user\nTask Instruction: Sell eggs<|im_end|>\n'), 'exit(message="sold")'],
      ],
    );
    const log = async (key: string) => (await stack.store.getJson<{ logTail: string[] }>(`${key}.trainer-log.json`)).logTail;
    const actorLog = await log(sft.models.actor);
    for (const line of [
      'loaded 4 examples',
      'WEBRL_TRAIN_DATA_FORMAT=training-records',
      'WEBRL_TRAIN_PROMPT_FORMAT=chat-template',
      'init files: adapter_config.json',
    ])
      assert.ok(actorLog.includes(line), `${line} in ${actorLog.join(' | ')}`);
    // The critic is trained once, after the probe (here a probe with no graded outcome: the
    // demonstrations alone). It reads its states as records too (the prompt alone, labelled by the
    // return), each under its trajectory's trace, so the trainer can weigh every trajectory once.
    assert.equal(sft.models.critic, 'models.critic (trained after the probe)');
    const fitted = await run(train.fitOrmAndCriticToProbe, { ...phase0, ...data, shards: [], orm: sft.models.orm, critic: sft.models.critic });
    assert.equal(fitted.critic, ctx.key(phase0, 'checkpoints', 'critic-probe-fit.onnx'));
    assert.ok((await log(fitted.critic)).includes('WEBRL_TRAIN_DATA_FORMAT=training-records'));
    const criticData = ctx.key(phase0, 'probe-fit', 'critic.jsonl');
    const criticRecords = (await ctx.readDataset<unknown>({ ...data.criticExamples, key: trainingRecordsKey(criticData) })).map(
      (row) => trainingRecordSchema.parse(row) as TrainingStepRecord,
    );
    assert.deepEqual(
      criticRecords.map((r) => [r.traceId, r.id, r.step, r.mcReturn, r.response]),
      [
        ['traces/a.jsonl', 'traces/a.jsonl:0', 0, 0.9, ''],
        ['traces/a.jsonl', 'traces/a.jsonl:1', 1, 1, ''],
        ['critic-2', 'critic-2:0', 0, 0, ''],
      ],
    );
    assert.equal(sft.models.orm, 'models.orm (chat, not trained by the campaign)');
    assert.equal(fitted.orm, sft.models.orm);
    for await (const { key } of stack.store.list(ctx.key(phase0, 'checkpoints', 'orm'))) assert.fail(`no ORM job runs, but ${key} was stored`);
  });

  test('filterTasksByCritic with an onnx-file critic matches the embedded critic on the real start page', async () => {
    // A small critic checkpoint saved by the project's checkpoint code, with random (seeded) weights.
    const network = createNetwork(networkShape('critic', 4), 5);
    const rng = new SeededRng(5);
    for (const name of PARAMETER_NAMES) for (let i = 0; i < network.params[name].length; i++) network.params[name][i] = (rng.next() - 0.5) * 0.6;
    const dir = join(stack.dir, 'critic-file');
    await mkdir(dir, { recursive: true });
    const path = join(dir, 'critic.onnx');
    await saveModel(path, network, {
      kind: 'critic',
      seed: 5,
      training: { data: [], objective: 'critic', steps: 0, examples: 0, hyperparameters: {} },
      metrics: {},
    });

    const { scope: phase, config } = await scope({ models: { critic: { backend: 'onnx-file', path } } });
    // Tasks of different templates, all starting on the shopping home page: one page, several intents.
    const byTemplate = new Map<number | undefined, WebArenaTask>();
    for (const task of embeddedSplit(config.campaign.environment.worldSeed, 'train')) {
      if (task.start_url === '__SHOPPING__' && !byTemplate.has(task.intent_template_id)) byTemplate.set(task.intent_template_id, task);
    }
    const candidates = [...byTemplate.values()].slice(0, 4);

    // The values the embedded critic gives the same network on the start page, seen here independently.
    const sites = await embeddedSitesOf(runtime, config.campaign.environment.worldSeed);
    let home: Observation | undefined;
    await runtime.pool.runEpisode({
      task: toEpisodeTask(candidates[0]!, sites.urls),
      environment: new EmbeddedEnvironment({ siteUrls: sites.urls, tasks: candidates }),
      policy: {
        name: 'look',
        async act({ observation }) {
          home = observation;
          return { response: 'exit(message="")', prompt: '' };
        },
      },
      options: { maxSteps: 1 },
    });
    assert.ok(home, 'the start page was observed');
    const expected = await new Critic(inMemoryModel(network, 'critic')).values(candidates.map((t) => ({ intent: t.intent, history: [], observation: home! })));
    // A band [low, 1] between the second and third best heads keeps exactly the best two tasks.
    const best = expected.map((v) => Math.max(v.v1, v.v2));
    const sorted = [...best].sort((a, b) => b - a);
    assert.ok(sorted[1]! - sorted[2]! > 1e-4, `the random critic separates the tasks: ${sorted.join(', ')}`);
    const low = (sorted[1]! + sorted[2]!) / 2;

    const models = new ModelCache(ctx);
    const activities = createBrowserActivities({ ctx, runtime, roles: workerRoles(ctx, models) });
    const result = await run(activities.filterTasksByCritic, {
      ...phase,
      candidates: await ctx.writeDataset(ctx.key(phase, 'tasks', 'candidates.jsonl'), candidates),
      critic: 'campaigns/nowhere/critic.onnx',
      band: [low, 1],
    });
    const kept = await ctx.readDataset<WebArenaTask>(result.tasks);
    assert.deepEqual(
      kept.map((t) => t.task_id),
      candidates.filter((_, i) => best[i]! >= low).map((t) => t.task_id),
    );
    assert.equal(kept.length, 2);
    const recorded = await stack.store.getJson<{ taskId: number; v1: number; v2: number; value: number }[]>(ctx.key(phase, 'tasks', 'critic-values.json'));
    recorded.forEach((v, i) => {
      assert.equal(v.taskId, candidates[i]!.task_id);
      assert.ok(
        Math.abs(v.v1 - expected[i]!.v1) < 1e-5 && Math.abs(v.v2 - expected[i]!.v2) < 1e-5,
        `task ${v.taskId}: ${JSON.stringify(v)} vs ${JSON.stringify(expected[i])}`,
      );
    });
    const mean = expected.reduce((sum, v) => sum + v.value, 0) / expected.length;
    assert.ok(Math.abs(result.meanValue - mean) < 1e-5, `mean critic value ${result.meanValue} vs ${mean}`);
    assert.equal(await stack.store.tryGetJson(ctx.key(phase, 'tasks', 'critic-failures.json')), undefined);
  });

  test('filterTasksByCritic with no critic keeps the first tasks up to the limit and records no values', async () => {
    const { scope: phase, config } = await scope({ models: { critic: { backend: 'none' } } });
    const candidates = embeddedSplit(config.campaign.environment.worldSeed, 'train').slice(0, 5);
    const activities = createBrowserActivities({ ctx, runtime, roles: workerRoles(ctx, new ModelCache(ctx)) });
    const input = {
      ...phase,
      candidates: await ctx.writeDataset(ctx.key(phase, 'tasks', 'candidates.jsonl'), candidates),
      band: [0.05, 0.75] as [number, number],
    };
    const result = await run(activities.filterTasksByCritic, { ...input, critic: 'campaigns/nowhere/critic', limit: 3 });
    assert.deepEqual(
      (await ctx.readDataset<WebArenaTask>(result.tasks)).map((t) => t.task_id),
      candidates.slice(0, 3).map((t) => t.task_id),
    );
    assert.equal(result.meanValue, 0);
    assert.equal(await stack.store.tryGetJson(ctx.key(phase, 'tasks', 'critic-values.json')), undefined);
  });

  test('a generated task without an evaluator rolls out with evaluator score 0', async () => {
    const intent = 'Look up racing wheels with the store search';
    const generator = await server(() => ({ json: chatCompletion(JSON.stringify([{ intent, start_url: '__SHOPPING__' }]), MODEL) }));
    const actor = await server((request) => {
      const { round, html, body } = readPrompt(request);
      return { json: textCompletion(searchPlan('racing wheel', round, html), String(body.model)) };
    });
    const chat = { baseUrl: `${generator.url}/v1`, model: MODEL, maxAttempts: 1, retryDelayMs: 0, timeoutMs: 5_000 };
    const { scope: phase, config } = await scope({
      campaign: { environment: { maxSteps: 4 } },
      models: {
        actor: actorConfig(actor.url),
        trainer: TRAINER,
        taskGenerator: { backend: 'chat', ...chat, turns: 1, tasksPerTurn: 1, fillWithEmbedded: false },
      },
    });
    // The generated task, as the chat generator makes it in a real phase.
    const failed = embeddedSplit(config.campaign.environment.worldSeed, 'train')
      .filter((t) => t.start_url === '__SHOPPING__')
      .slice(0, 1);
    const failedTasks = await ctx.writeDataset(ctx.key(phase, 'failed.jsonl'), failed);
    const generated = await run(createControlActivities({ ctx, roles: workerRoles(ctx) }).generateTasks, { ...phase, failedTasks, count: 1, curriculum: true });
    const [task] = await ctx.readDataset<WebArenaTask>(generated);
    assert.equal(task?.intent, intent);
    assert.equal('eval' in task!, false, 'the generated task has no evaluator');

    const activities = createBrowserActivities({ ctx, runtime, roles: workerRoles(ctx, new RemoteActorModels(ctx)) });
    const result = await run(activities.runRolloutShard, {
      ...phase,
      purpose: 'train',
      tasks: generated,
      shard: 0,
      offset: 0,
      limit: 1,
      actor: NO_ACTOR,
      temperature: 1,
    });
    const [only] = await trajectories(result.trajectories);
    // The same actions score 1 on the evaluated "Search for" task above; here there is no ground truth.
    assert.deepEqual([only!.record.score, only!.record.graded, only!.record.reason, only!.record.steps, only!.record.answer], [0, false, 'exit', 2, 'Done']);
    assert.deepEqual(only!.trace[0]!.execution, { ok: true });
    assert.match(only!.trace[1]!.url, /catalogsearch\/result\/\?q=racing\+wheel/);
    assert.equal(only!.record.intent, intent);
    assert.equal(only!.row.taskId, String(task!.task_id));
  });
});
