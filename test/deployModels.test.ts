/**
 * The serving handoff (activities/campaign/deployActivities.ts) against a vLLM-like server on the real
 * store: a directory checkpoint is synced and loaded under the phase's name, byte for byte; a retried
 * deployment loads nothing twice; old adapters are unloaded; a rejected adapter, a taken name, a failed
 * deploy command and a name never listed fail non-retryably with the server's words; the rollout and
 * scoring clients ask for the served name.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { DeleteObjectCommand } from '@aws-sdk/client-s3';
import { ApplicationFailure } from '@temporalio/common';
import { ArtifactStore } from '../storage/artifactStore';
import { CampaignContext } from '../activities/campaign/context';
import { createDeployActivities, servedModelName } from '../activities/campaign/deployActivities';
import { remoteActorPolicy, remoteActorScorer } from '../activities/campaign/backends';
import { parseConfig } from '../config/load';
import { manifestKey } from '../storage/keys';
import { uploadCheckpoint } from '../storage/checkpoints';
import type { PhaseScope } from '../workflows/campaignTypes';
import { activityRunner } from './harness/activityContext';
import { startTestStack, type TestStack } from './harness/stack';
import { startVllmServer, type VllmServer } from './models/fixtures/vllmServer';

const run = activityRunner();
const DEPLOY_SCRIPT = fileURLToPath(new URL('./models/fixtures/deployAdapter.mjs', import.meta.url));

describe('deployModels: serving each phase’s actor', () => {
  let stack: TestStack;
  let ctx: CampaignContext;
  let vllm: VllmServer;
  let shared: string;
  let campaigns = 0;

  before(async () => {
    stack = await startTestStack();
    ctx = new CampaignContext(stack.store, join(stack.dir, 'work'));
    shared = await mkdtemp(join(tmpdir(), 'webrl-adapters-'));
    vllm = await startVllmServer({ base: 'base-llm', answer: (model) => `answer from ${model}` });
  });
  after(async () => {
    await vllm?.close();
    await rm(shared, { recursive: true, force: true });
    await stack?.stop();
  });

  async function campaign(serving: Record<string, unknown>, id = `deploy-${++campaigns}`): Promise<(phase: number) => PhaseScope> {
    const config = parseConfig({
      s3: stack.config.s3,
      stack: stack.config.stack,
      models: {
        actor: { backend: 'completions', baseUrl: vllm.baseUrl, model: 'base-llm' },
        trainer: { backend: 'external', command: 'train {data} {out}' },
        serving,
      },
    });
    const configKey = `campaigns/${id}/config.json`;
    await stack.store.putJson(configKey, config);
    return (phase) => ({ campaignId: id, configKey, phase, seed: 1 });
  }

  /** A trained adapter directory in the store, as the external trainer leaves it. */
  async function adapter(scope: PhaseScope, weights: string): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'webrl-adapter-'));
    await writeFile(join(dir, 'adapter_config.json'), JSON.stringify({ r: 8, base_model_name_or_path: 'base-llm' }));
    await mkdir(join(dir, 'extra'));
    await writeFile(join(dir, 'adapter_model.safetensors'), weights);
    await writeFile(join(dir, 'extra', 'tokenizer.json'), '{}');
    const key = ctx.key(scope, 'checkpoints', 'actor.onnx');
    await uploadCheckpoint(stack.store, key, dir);
    await rm(dir, { recursive: true });
    return key;
  }

  const failsFor = (pattern: RegExp) => (error: unknown) => {
    assert.ok(error instanceof ApplicationFailure, String(error));
    assert.equal(error.nonRetryable, true);
    assert.match(error.message, pattern);
    return true;
  };

  test('vllm-lora: synced, loaded once under the phase name, byte for byte; old phases unloaded', async () => {
    const scopeOf = await campaign({ backend: 'vllm-lora', baseUrl: vllm.baseUrl, sharedDir: shared, keepPhases: 2 });
    const { deployModels } = createDeployActivities({ ctx });
    for (const phase of [0, 1, 2]) {
      const scope = scopeOf(phase);
      const actor = await adapter(scope, `weights of phase ${phase}`);
      const result = await run(deployModels, { ...scope, actor });
      const name = `${scope.campaignId}-p${phase}-actor`;
      assert.deepEqual(result.served, { actor: { name, checkpoint: actor } });
      assert.equal(await servedModelName(stack.store, actor), name);
      const load = vllm.loads.find((l) => l.name === name)!;
      assert.equal(load.path, join(shared, scope.campaignId, `phase-${phase}`, 'actor'));
      assert.equal(load.files.get('adapter_model.safetensors')!.toString(), `weights of phase ${phase}`);
      assert.deepEqual([...load.files.keys()].sort(), ['adapter_config.json', 'adapter_model.safetensors', 'extra/tokenizer.json']);

      // A retried activity finds its published deployment; one whose manifest never got written finds the
      // name listed with its adapter. Neither loads it again.
      assert.deepEqual(await run(deployModels, { ...scope, actor }), result);
      await stack.store.client.send(new DeleteObjectCommand({ Bucket: stack.store.bucket, Key: `${stack.store.prefix}${manifestKey(ctx.key(scope, 'serving', 'actor'))}` }));
      assert.deepEqual(await run(deployModels, { ...scope, actor }), result);
      assert.equal(vllm.loads.filter((l) => l.name === name).length, 1);
    }
    assert.deepEqual(vllm.unloads, [`${scopeOf(0).campaignId}-p0-actor`], 'phase 0 is unloaded once phase 2 is served');
    assert.deepEqual([...vllm.adapters.keys()], [`${scopeOf(1).campaignId}-p1-actor`, `${scopeOf(2).campaignId}-p2-actor`]);

    // The rollout policy and the log-prob scorer ask the server for the served name.
    const config = parseConfig({ models: { actor: { backend: 'completions', baseUrl: vllm.baseUrl, model: 'base-llm' }, trainer: { backend: 'external', command: 'train {data} {out}' } } });
    const name = await servedModelName(stack.store, ctx.key(scopeOf(2), 'checkpoints', 'actor.onnx'));
    const before = vllm.requests.length;
    const policy = remoteActorPolicy(config.models, 0, name)!;
    const reply = await policy.act({ task: { intent: 'x' }, observation: { html: '<html></html>' }, history: [] } as never);
    assert.equal(reply.response, `answer from ${name}`);
    await remoteActorScorer(config.models, {}, undefined, name)!.logProbs([{ state: { intent: 'x', history: [], observation: { html: '<p>' } } as never, response: 'exit(message="a")' }]);
    assert.deepEqual(vllm.requests.slice(before).map((r) => (r.body as { model: string }).model), [name, name]);
  });

  test('a name served with another checkpoint is refused, naming both; a rejected adapter fails the phase', async () => {
    const scopeOf = await campaign({ backend: 'vllm-lora', baseUrl: vllm.baseUrl, sharedDir: shared });
    const { deployModels } = createDeployActivities({ ctx });
    const first = scopeOf(1);
    await run(deployModels, { ...first, actor: await adapter(first, 'one') });
    // The same campaign name in another store (another team's bucket prefix) sharing this server.
    const otherStore = new ArtifactStore({ ...stack.config.s3, prefix: 'other-team/' }, stack.secrets.s3);
    const otherCtx = new CampaignContext(otherStore, join(stack.dir, 'work-other'));
    try {
      await otherStore.putJson(first.configKey, { ...(await stack.store.getJson<Record<string, unknown>>(first.configKey)), models: { ...(await ctx.config(first)).models, serving: { backend: 'vllm-lora', baseUrl: vllm.baseUrl, sharedDir: join(shared, 'other-team'), adapterLocation: 'shared-dir', keepPhases: 2, timeoutMs: 10_000 } } });
      const actor = otherCtx.key(first, 'checkpoints', 'actor.onnx');
      await uploadCheckpoint(otherStore, actor, join(shared, first.campaignId, 'phase-1', 'actor'));
      await assert.rejects(
        run(createDeployActivities({ ctx: otherCtx }).deployModels, { ...first, actor }),
        failsFor(/served name .*-p1-actor is taken by the adapter .*\/phase-1\/actor; this campaign's checkpoint .*actor\.onnx \(.*other-team.*\) was not loaded/),
      );
    } finally {
      otherStore.destroy();
    }

    const rejecting = await campaign({ backend: 'vllm-lora', baseUrl: vllm.baseUrl, sharedDir: shared });
    vllm.rejectNextLoad = 'Loading lora failed: the adapter rank 512 exceeds --max-lora-rank 64';
    const phase = rejecting(1);
    await assert.rejects(run(deployModels, { ...phase, actor: await adapter(phase, 'big') }), failsFor(/refused the adapter .*-p1-actor .*answered 400: Loading lora failed: the adapter rank 512 exceeds --max-lora-rank 64/));
    // retry-phase: the same deployment again, now accepted, without retraining anything.
    await run(deployModels, { ...phase, actor: ctx.key(phase, 'checkpoints', 'actor.onnx') });
    assert.ok(vllm.adapters.has(`${phase.campaignId}-p1-actor`));
  });

  test('command: the deploy command runs once and the name is polled until listed; failures name the cause', async () => {
    const command = `${process.execPath} ${DEPLOY_SCRIPT} ${vllm.url} {checkpoint} {name} {role}`;
    const scopeOf = await campaign({ backend: 'command', baseUrl: vllm.baseUrl, command, timeoutSeconds: 20, pollMs: 20 });
    const { deployModels } = createDeployActivities({ ctx });
    const scope = scopeOf(1);
    const actor = await adapter(scope, 'commanded weights');
    const result = await run(deployModels, { ...scope, actor });
    const name = `${scope.campaignId}-p1-actor`;
    assert.equal(result.served?.actor.name, name);
    const loads = vllm.loads.filter((l) => l.name === name);
    assert.equal(loads.length, 1);
    assert.equal(loads[0]!.files.get('adapter_model.safetensors')!.toString(), 'commanded weights');

    const failing = await campaign({ backend: 'command', baseUrl: vllm.baseUrl, command: `${command} --fail`, timeoutSeconds: 20, pollMs: 20 });
    const broken = failing(1);
    await assert.rejects(run(deployModels, { ...broken, actor: await adapter(broken, 'x') }), failsFor(/deploy command for .*-p1-actor failed \(exit code 4\); last lines:[\s\S]*no GPU left for the new replica/));
    const silent = await campaign({ backend: 'command', baseUrl: vllm.baseUrl, command: `${command} --skip`, timeoutSeconds: 1, pollMs: 20 });
    const never = silent(1);
    await assert.rejects(run(deployModels, { ...never, actor: await adapter(never, 'x') }), failsFor(/-p1-actor was not listed by .* within 1 s/));
  });
});
