/**
 * The LLM path closes the loop on the local stack: a completions actor, an external trainer writing
 * LoRA adapters, and serving by vLLM's runtime LoRA API or by a deploy command. Each phase's rollouts and
 * evaluation ask the server for the adapter the trainer wrote (the stored trajectories say which model
 * acted), and the adapter loaded under each phase's name is, byte for byte, the stored checkpoint. A
 * worker killed while it deploys loses nothing and loads nothing twice.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@temporalio/client';
import { downloadCheckpoint } from '../storage/checkpoints';
import { ArtifactStore } from '../storage/artifactStore';
import { assertManifestsEqualBesideConfig } from './harness/campaign';
import { runLlmCampaign, type LlmCampaignRun } from './harness/llmCampaign';
import { startTestStack, type TestStack } from './harness/stack';

async function filesOf(dir: string): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  for (const name of (await readdir(dir)).sort()) files.set(name, await readFile(join(dir, name), 'utf8'));
  return files;
}

describe('an LLM campaign serves each phase’s trained actor to the phases after it', () => {
  let stack: TestStack;
  let client: Client;
  before(async () => {
    stack = await startTestStack();
    client = await stack.client();
  });
  after(() => stack?.stop());

  async function check(run: LlmCampaignRun, name: string): Promise<void> {
    assert.equal(run.final.status, 'completed');
    assert.deepEqual(
      run.manifests.map((m) => m.data.served?.actor.name),
      [0, 1, 2].map((k) => `${name}-p${k}-actor`),
    );
    const scratch = await mkdtemp(join(tmpdir(), 'webrl-llm-check-'));
    try {
      for (const manifest of run.manifests) {
        const k = manifest.data.phase;
        const served = manifest.data.served!.actor;
        assert.equal(served.checkpoint, manifest.data.carry.models.actor);
        // Phase k's rollouts act with the previous phase's actor (phase 0 probes with the SFT actor), its
        // evaluation with its own.
        const rollout = await run.actedBy(k, k === 0 ? 'probe' : 'train');
        assert.ok(rollout.length > 0, `phase ${k} rolled out`);
        assert.deepEqual([...new Set(rollout)], [`${name}-p${Math.max(0, k - 1)}-actor`], `phase ${k} rollouts`);
        assert.deepEqual([...new Set(await run.actedBy(k, 'eval'))], [served.name], `phase ${k} evaluation`);
        // The adapter loaded under the phase's name is what the trainer wrote, and was loaded once.
        const loads = run.vllm.loads.filter((load) => load.name === served.name);
        assert.equal(loads.length, 1, `${served.name} loaded once`);
        const stored = join(scratch, `phase-${k}`);
        await downloadCheckpoint(run.store, served.checkpoint, stored);
        const loaded = new Map([...loads[0]!.files].map(([path, bytes]) => [path, bytes.toString('utf8')]));
        assert.deepEqual(loaded, await filesOf(stored), `${served.name} is byte for byte the trainer's output`);
        assert.match(loaded.get('adapter_model.safetensors')!, /^lora weights [0-9a-f]{64}$/);
      }
      // Every completion request named a served phase model, never the base model.
      const named = run.vllm.requests.filter((r) => r.url === '/v1/completions').map((r) => (r.body as { model: string }).model);
      assert.ok(named.length > 0 && named.every((model) => /-p\d-actor$/.test(model)), [...new Set(named)].join(', '));
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  }

  let uninterrupted: Pick<LlmCampaignRun, 'manifests' | 'config'> | undefined;

  test('serving: vllm-lora, two RL phases', async () => {
    const run = await runLlmCampaign(stack, client, 'llm-lora', 'vllm-lora');
    try {
      await check(run, 'llm-lora');
      uninterrupted = { manifests: run.manifests, config: run.config };
      assert.deepEqual(run.vllm.unloads, ['llm-lora-p0-actor'], 'phase 0 unloaded once phase 2 is served (keepPhases 2)');
    } finally {
      await run.close();
    }
  });

  test('a SIGKILL of the worker in deployModels: the campaign completes, each adapter loaded once, manifests equal the uninterrupted run', async () => {
    assert.ok(uninterrupted, 'the uninterrupted run (the test before) is missing');
    const run = await runLlmCampaign(stack, client, 'llm-lora', 'vllm-lora', {
      prefix: 'llm-lora-crashed/',
      crashInDeployOfPhase: 1,
      like: uninterrupted.config,
    });
    try {
      await check(run, 'llm-lora');
      const reference = new ArtifactStore(uninterrupted.config.s3, stack.secrets.s3);
      try {
        await assertManifestsEqualBesideConfig('llm-lora', run, { store: reference, manifests: uninterrupted.manifests });
      } finally {
        reference.destroy();
      }
    } finally {
      await run.close();
    }
  });

  test('serving: command, two RL phases', async () => {
    const run = await runLlmCampaign(stack, client, 'llm-command', 'command');
    try {
      await check(run, 'llm-command');
    } finally {
      await run.close();
    }
  });
});
