/**
 * The serving handoff (activities/campaign/deployActivities.ts) on the real store. `vllm-lora` against
 * real vLLM (its CPU build, provisioned by the project) serving a tiny Llama with --max-lora-rank 8: a
 * directory checkpoint is synced and loaded under the phase's name, byte for byte; a retried deployment,
 * and one racing its own first load, load nothing twice; old adapters are unloaded (a vLLM restart under
 * a campaign is campaignTorch.test.ts's); adapters vLLM refuses (rank above its limit, missing on its
 * disk) and a taken name fail non-retryably with vLLM's words, a too-high rank before
 * anything reaches the server. `command` against the scriptable fixture (a user's deploy script). The
 * rollout and scoring clients ask for the served name.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { DeleteObjectCommand } from '@aws-sdk/client-s3';
import { ApplicationFailure } from '@temporalio/common';
import { ArtifactStore } from '../storage/artifactStore';
import { CampaignContext } from '../activities/campaign/context';
import { createDeployActivities } from '../activities/campaign/deployActivities';
import { servedActor, servedRecordKey } from '../models/backends/serving';
import type { ServedModelRecord } from '../models/backends/roles';
import { completionsActorPolicy, completionsActorScorer } from '../models/backends/completions';
import { createCompletionsActorScorer } from '../models/remote/completionsActor';
import { parseConfig } from '../config/load';
import { manifestKey } from '../storage/keys';
import { uploadCheckpoint } from '../storage/checkpoints';
import type { PhaseScope } from '../storage/keys';
import { activityRunner } from './harness/activityContext';
import { writeLoraAdapter } from './harness/loraAdapter';
import { startTestStack, type TestStack } from './harness/stack';
import { workerRoles } from './harness/roles';
import { sha256Files, startRecordedVllm, tinyModel, type RecordedVllm } from './harness/vllm';
import { startVllmServer as startVllmFixture, type VllmServer } from './models/fixtures/vllmServer';

const run = activityRunner();
const DEPLOY_SCRIPT = fileURLToPath(new URL('./models/fixtures/deployAdapter.mjs', import.meta.url));
const BASE = 'tiny-llama';

describe('deployModels: serving each phase’s actor', () => {
  let stack: TestStack;
  let ctx: CampaignContext;
  let vllm: RecordedVllm;
  let fixture: VllmServer;
  let scratch: string;
  let shared: string;
  let model: string;
  let campaigns = 0;

  before(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'webrl-deploy-'));
    shared = join(scratch, 'adapters');
    model = tinyModel();
    stack = await startTestStack();
    ctx = new CampaignContext(stack.store, join(stack.dir, 'work'));
    vllm = await startRecordedVllm({ model, servedModelName: BASE, maxLoraRank: 8, maxModelLen: 4096, logFile: join(scratch, 'vllm.log') });
    fixture = await startVllmFixture({ base: BASE, answer: (name) => `answer from ${name}` });
  });
  after(async () => {
    await vllm?.close();
    await fixture?.close();
    await stack?.stop();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  async function campaign(serving: Record<string, unknown>, id = `deploy-${++campaigns}`): Promise<(phase: number) => PhaseScope> {
    const config = parseConfig({
      s3: stack.config.s3,
      stack: stack.config.stack,
      models: {
        actor: { backend: 'completions', baseUrl: vllm.baseUrl, model: BASE },
        trainer: { backend: 'external', command: 'train {data} {out}' },
        serving,
      },
    });
    const configKey = `campaigns/${id}/config.json`;
    await stack.store.putJson(configKey, config);
    return (phase) => ({ campaignId: id, configKey, phase, seed: 1 });
  }

  /** A trained adapter directory in the store, as the external trainer leaves it. */
  async function adapter(scope: PhaseScope, rank = 4, extraConfig?: Record<string, unknown>): Promise<string> {
    const dir = await writeLoraAdapter(join(scratch, 'trained', `${scope.campaignId}-${scope.phase}`), {
      baseModel: model,
      rank,
      seed: 100 * campaigns + scope.phase,
      ...(extraConfig ? { extraConfig } : {}),
    });
    const key = ctx.key(scope, 'checkpoints', 'actor');
    await uploadCheckpoint(stack.store, key, dir);
    return key;
  }

  const failsFor = (pattern: RegExp) => (error: unknown) => {
    assert.ok(error instanceof ApplicationFailure, String(error));
    assert.equal(error.nonRetryable, true);
    assert.match(error.message, pattern);
    return true;
  };
  const loadsOf = (name: string) => vllm.requests.filter((r) => r.path === '/v1/load_lora_adapter' && r.loraName === name);
  const listed = async () => ((await (await fetch(`${vllm.baseUrl}/models`)).json()) as { data: { id: string; root: string }[] }).data;

  test('vllm-lora: synced, loaded once under the phase name, byte for byte; retries and a racing retry load nothing twice; old phases unloaded', async () => {
    const scopeOf = await campaign({ backend: 'vllm-lora', baseUrl: vllm.baseUrl, sharedDir: shared, keepPhases: 2, maxLoraRank: 8 });
    const { deployModels } = createDeployActivities({ ctx, roles: workerRoles(ctx) });
    for (const phase of [0, 1, 2]) {
      const scope = scopeOf(phase);
      const actor = await adapter(scope);
      const name = `${scope.campaignId}-p${phase}-actor`;
      let results: Awaited<ReturnType<typeof deployModels>>[];
      if (phase === 1) {
        // A retry that starts while the first attempt's load is on its way: the retry's load arrives
        // first, and vLLM answers the first attempt's with 400 "already been loaded", a success.
        const hold = vllm.holdNext('/v1/load_lora_adapter');
        const first = run(deployModels, { ...scope, actor });
        await hold.held;
        const retry = await run(deployModels, { ...scope, actor });
        hold.release();
        results = [await first, retry];
        assert.deepEqual(
          loadsOf(name).map((r) => r.status),
          [400, 200],
          'the retry loaded it; the first attempt, sent earlier, was told it is loaded',
        );
      } else {
        results = [await run(deployModels, { ...scope, actor })];
      }
      for (const result of results) assert.deepEqual(result.served, { actor: { name, checkpoint: actor } });
      assert.equal((await stack.store.getJson<ServedModelRecord>(servedRecordKey(actor))).name, name);
      const path = join(shared, scope.campaignId, `phase-${phase}`, 'actor');
      const loaded = loadsOf(name).filter((r) => r.status === 200);
      assert.equal(loaded.length, 1, `${name} loaded once: ${JSON.stringify(loadsOf(name))}`);
      assert.equal(loaded[0]!.loraPath, path);
      assert.deepEqual(loaded[0]!.files, await sha256Files(join(scratch, 'trained', `${scope.campaignId}-${phase}`)));
      assert.equal((await listed()).find((m) => m.id === name)?.root, path, 'vLLM lists the adapter with the path as sent');

      // A retried activity finds its published deployment; one whose manifest never got written finds the
      // name listed with its adapter. Neither loads it again.
      assert.deepEqual(await run(deployModels, { ...scope, actor }), results[0]);
      await stack.store.client.send(
        new DeleteObjectCommand({ Bucket: stack.store.bucket, Key: `${stack.store.prefix}${manifestKey(ctx.key(scope, 'serving', 'actor'))}` }),
      );
      assert.deepEqual(await run(deployModels, { ...scope, actor }), results[0]);
      assert.equal(loadsOf(name).filter((r) => r.status === 200).length, 1);
    }
    const id = scopeOf(0).campaignId;
    assert.deepEqual(
      vllm.requests.filter((r) => r.path === '/v1/unload_lora_adapter').map((r) => [r.loraName, r.status]),
      [[`${id}-p0-actor`, 200]],
      'phase 0 is unloaded once phase 2 is served',
    );
    assert.deepEqual(
      (await listed()).map((m) => m.id).filter((m) => m.startsWith(id)),
      [`${id}-p1-actor`, `${id}-p2-actor`],
    );

    // A served actor is asked for by its name, and one vLLM lists is not loaded again. (A vLLM restart,
    // after which the name is missing and the adapter is loaded again, is campaignTorch.test.ts's.)
    const config = await ctx.config(scopeOf(2));
    const actor = ctx.key(scopeOf(2), 'checkpoints', 'actor');
    const { serving } = workerRoles(ctx)(config);
    const name = await run(servedActor, ctx, serving, actor);
    assert.equal(name, `${id}-p2-actor`);
    assert.equal(loadsOf(name).length, 1, 'listed: not loaded again');

    const before = vllm.requests.length;
    const completions = config.models.actor;
    assert.ok(completions.backend === 'completions');
    const policy = completionsActorPolicy(completions, 0, name);
    const reply = await policy.act({ task: { intent: 'x' }, observation: { html: '<html></html>' }, history: [] } as never);
    assert.equal(typeof reply.response, 'string');
    const [scored] = await completionsActorScorer(completions, {}, undefined, name).logProbs([
      { state: { intent: 'x', history: [], observation: { html: '<p>' } } as never, response: 'exit(message="a")' },
    ]);
    assert.ok(scored!.tokens > 0 && Number.isFinite(scored!.logProb));
    const sent = vllm.requests.slice(before);
    assert.deepEqual(
      sent.filter((r) => r.path === '/v1/completions').map((r) => [r.model, r.status]),
      [
        [name, 200],
        [name, 200],
      ],
    );
    // The prompt budget is counted by the base model's tokenizer (every adapter shares it).
    assert.ok(sent.filter((r) => r.path === '/tokenize').every((r) => r.model === BASE && r.status === 200));
  });

  test('log-probs agree in echo and prompt_logprobs modes with a BOS-adding tokenizer, on the base model and on an adapter', async () => {
    const scopeOf = await campaign({ backend: 'vllm-lora', baseUrl: vllm.baseUrl, sharedDir: shared, maxLoraRank: 8 });
    const scope = scopeOf(1);
    const { served } = await run(createDeployActivities({ ctx, roles: workerRoles(ctx) }).deployModels, { ...scope, actor: await adapter(scope) });
    const items = ['exit(message="$5.00")', 'do(action="Click", element="3")'].map((response) => ({
      state: { intent: 'Buy a lamp', history: [], observation: { html: '<button id="3"> Search </button>' } } as never,
      response,
    }));
    for (const model of [BASE, served!.actor.name]) {
      // One request at a time: vLLM's CPU build cannot batch prompt log-probs under LoRA (RecordedVllm.logprobConcurrency).
      const scorer = (mode: 'echo' | 'prompt_logprobs') => createCompletionsActorScorer({ baseURL: vllm.baseUrl, model, mode, maxAttempts: 1, concurrency: 1 });
      const echo = await scorer('echo').logProbs(items);
      const prompt = await scorer('prompt_logprobs').logProbs(items);
      for (let i = 0; i < items.length; i++) {
        assert.ok(echo[i]!.tokens > 0 && echo[i]!.tokens === prompt[i]!.tokens, `${model}: ${echo[i]!.tokens} vs ${prompt[i]!.tokens} tokens`);
        assert.ok(
          Math.abs(echo[i]!.logProb - prompt[i]!.logProb) < 1e-3 * Math.max(1, Math.abs(echo[i]!.logProb)),
          `${model}: ${echo[i]!.logProb} vs ${prompt[i]!.logProb}`,
        );
      }
    }
    assert.ok(vllm.requests.some((r) => r.echo && r.model === BASE && r.status === 200));
  });

  test('a name served with another checkpoint, and adapters vLLM refuses, fail the phase with the reason', async () => {
    const scopeOf = await campaign({ backend: 'vllm-lora', baseUrl: vllm.baseUrl, sharedDir: shared, maxLoraRank: 8 });
    const { deployModels } = createDeployActivities({ ctx, roles: workerRoles(ctx) });
    const first = scopeOf(1);
    await run(deployModels, { ...first, actor: await adapter(first) });
    // The same campaign name in another store (another team's bucket prefix) sharing this server.
    const otherStore = new ArtifactStore({ ...stack.config.s3, prefix: 'other-team/' }, stack.secrets.s3);
    const otherCtx = new CampaignContext(otherStore, join(stack.dir, 'work-other'));
    try {
      await otherStore.putJson(first.configKey, {
        ...(await stack.store.getJson<Record<string, unknown>>(first.configKey)),
        models: {
          ...(await ctx.config(first)).models,
          serving: {
            backend: 'vllm-lora',
            baseUrl: vllm.baseUrl,
            sharedDir: join(shared, 'other-team'),
            adapterLocation: 'shared-dir',
            keepPhases: 2,
            timeoutMs: 10_000,
            maxLoraRank: 8,
          },
        },
      });
      const actor = otherCtx.key(first, 'checkpoints', 'actor');
      await uploadCheckpoint(otherStore, actor, join(shared, first.campaignId, 'phase-1', 'actor'));
      await assert.rejects(
        run(createDeployActivities({ ctx: otherCtx, roles: workerRoles(otherCtx) }).deployModels, { ...first, actor }),
        failsFor(/served name .*-p1-actor is taken by the adapter .*\/phase-1\/actor; .*other-team.* was not loaded/),
      );
    } finally {
      otherStore.destroy();
    }

    // Checked before the server sees it: a rank above the limit, a DoRA adapter.
    const checked = scopeOf(2);
    const requests = vllm.requests.length;
    await assert.rejects(
      run(deployModels, { ...checked, actor: await adapter(checked, 16) }),
      failsFor(/vLLM would refuse the adapter .*-p2-actor .*: its rank 16 is above the server's --max-lora-rank 8$/),
    );
    const dora = scopeOf(3);
    await assert.rejects(run(deployModels, { ...dora, actor: await adapter(dora, 4, { use_dora: true }) }), failsFor(/it is a DoRA adapter/));
    assert.equal(
      vllm.requests.slice(requests).some((r) => r.path === '/v1/load_lora_adapter'),
      false,
    );

    // Refused by vLLM itself: a rank the config wrongly allows (500 from its worker), a path the server cannot see (404).
    const lenient = await campaign({ backend: 'vllm-lora', baseUrl: vllm.baseUrl, sharedDir: shared, maxLoraRank: 64 });
    const big = lenient(1);
    await assert.rejects(
      run(deployModels, { ...big, actor: await adapter(big, 16) }),
      failsFor(/refused the adapter .*-p1-actor .*answered 500: .*LoRA rank 16 is greater than max_lora_rank 8/),
    );
    const elsewhere = await campaign({
      backend: 'vllm-lora',
      baseUrl: vllm.baseUrl,
      sharedDir: shared,
      serverDir: join(scratch, 'not-mounted'),
      maxLoraRank: 8,
    });
    const unseen = elsewhere(1);
    const unseenActor = await adapter(unseen);
    await assert.rejects(
      run(deployModels, { ...unseen, actor: unseenActor }),
      failsFor(/refused the adapter .*-p1-actor .*answered 404: Loading lora .* failed: No adapter found/),
    );
  });

  test('command: the deploy command runs once and the name is polled until listed; failures name the cause', async () => {
    const command = `${process.execPath} ${DEPLOY_SCRIPT} ${fixture.url} {checkpoint} {name} {role}`;
    const scopeOf = await campaign({ backend: 'command', baseUrl: fixture.baseUrl, command, timeoutSeconds: 20, pollMs: 20 });
    const { deployModels } = createDeployActivities({ ctx, roles: workerRoles(ctx) });
    const scope = scopeOf(1);
    const actor = await adapter(scope);
    const result = await run(deployModels, { ...scope, actor });
    const name = `${scope.campaignId}-p1-actor`;
    assert.equal(result.served?.actor.name, name);
    const loads = fixture.loads.filter((l) => l.name === name);
    assert.equal(loads.length, 1);
    assert.ok(loads[0]!.files.has('adapter_model.safetensors'));

    const failing = await campaign({ backend: 'command', baseUrl: fixture.baseUrl, command: `${command} --fail`, timeoutSeconds: 20, pollMs: 20 });
    const broken = failing(1);
    await assert.rejects(
      run(deployModels, { ...broken, actor: await adapter(broken) }),
      failsFor(/deploy command for .*-p1-actor failed \(exit code 4\); last lines:[\s\S]*no GPU left for the new replica/),
    );
    const silent = await campaign({ backend: 'command', baseUrl: fixture.baseUrl, command: `${command} --skip`, timeoutSeconds: 1, pollMs: 20 });
    const never = silent(1);
    await assert.rejects(run(deployModels, { ...never, actor: await adapter(never) }), failsFor(/-p1-actor was not listed by .* within 1 s/));
  });
});
