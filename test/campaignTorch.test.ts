/**
 * The LLM campaign (test/harness/llmCampaign.ts) with real models: webrl-torch trains every model
 * (phase 0's SFT actor, critic and ORM from the embedded trainer's rows, then each phase's critic and
 * actor from training records), and the actor is a tiny random Llama served by the OpenAI-compatible
 * server of trainers/torch (transformers on CPU: generation, prompt log-probs, LoRA load/unload), which
 * loads each phase's adapter by vLLM's runtime LoRA API. The model's output is garbage (a random model):
 * what is checked is which model each request named and which weights were loaded, not success.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@temporalio/client';
import { exited } from '../infra/processes';
import { downloadCheckpoint } from '../storage/checkpoints';
import { ensureTrainerEnvironment } from '../trainers/torch/environment';
import { BASE_MODEL, runLlmCampaign, type ActorServer } from './harness/llmCampaign';
import { startTestStack, type TestStack } from './harness/stack';

const NAME = 'torch';
const PROMPT = 'Task Instruction: Buy a lamp\n\nRound 0\n\ndo(action="Click", element="3")';

interface LoggedRequest {
  path: string;
  status: number;
  model?: string;
  echo?: boolean;
  lora_name?: string;
  lora_path?: string;
  files?: Record<string, string>;
}

interface TinyServer extends ActorServer {
  requests(): Promise<LoggedRequest[]>;
  post(path: string, body: object): Promise<unknown>;
}

/** `python -m webrl_torch.testing.openai_server`, building the tiny model into `model` first. */
async function startTinyServer(python: string, model: string, log: string): Promise<TinyServer> {
  const child: ChildProcess = spawn(python, ['-m', 'webrl_torch.testing.openai_server', '--tiny', model, '--served-model-name', BASE_MODEL, '--context', '256', '--port', '0', '--log', log], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const tail: string[] = [];
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stderr! }).on('line', (line) => {
      tail.push(line);
      if (tail.length > 20) tail.shift();
      const found = / on (http:\/\/\S+\/v1)$/.exec(line);
      if (found) resolve(found[1]!);
    });
    child.once('exit', (code) => reject(new Error(`the tiny-model server exited with ${code}:\n${tail.join('\n')}`)));
  });
  return {
    baseUrl: url,
    base: BASE_MODEL,
    async requests() {
      return (await readFile(log, 'utf8')).split('\n').filter(Boolean).map((line) => JSON.parse(line) as LoggedRequest);
    },
    async post(path, body) {
      const response = await fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      assert.equal(response.status, 200, await response.clone().text());
      return response.headers.get('content-type') === 'application/json' ? response.json() : response.text();
    },
    async close() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await exited(child);
      }
    },
  };
}

async function sha256Files(dir: string, prefix = ''): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  for (const entry of await readdir(join(dir, prefix), { withFileTypes: true })) {
    const path = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) Object.assign(files, await sha256Files(dir, path));
    else files[path] = createHash('sha256').update(await readFile(join(dir, path))).digest('hex');
  }
  return files;
}

describe('a campaign trained by webrl-torch and served by the tiny-model server', () => {
  let stack: TestStack;
  let client: Client;
  let python: string;
  let scratch: string;
  before(async () => {
    python = ensureTrainerEnvironment();
    scratch = await mkdtemp(join(tmpdir(), 'webrl-torch-campaign-'));
    stack = await startTestStack();
    client = await stack.client();
  });
  after(async () => {
    await stack?.stop();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  test('SFT and two RL phases: each phase acts with the adapter the one before trained, loaded as stored, and it changes the log-probs', async () => {
    const model = join(scratch, 'tiny-llama'); // one directory: the server's base and the trainer's --base-model
    const server = await startTinyServer(python, model, join(scratch, 'requests.jsonl'));
    const trainer =
      `${join(dirname(python), 'webrl-torch')} train --base-model ${model} --data {data} --init {init} --reference {reference} --critic {critic} --out {out}` +
      ' --lora-rank 4 --lora-alpha 8 --max-length 256 --no-gradient-checkpointing --device cpu';
    const started = Date.now();
    const run = await runLlmCampaign(stack, client, NAME, 'vllm-lora', {
      actor: { server, maxTokens: 24, timeoutMs: 120_000 },
      trainer: { command: trainer, timeoutSeconds: 600 },
      campaign: {
        phase: { tasksPerPhase: 2, rolloutShardSize: 2, candidateFactor: 1 },
        environment: { testTasks: 2, demonstrationTasks: 4 },
        training: { sftEpochs: 1, ormEpochs: 1, criticEpochs: 1, actorEpochs: 1, batchSize: 8, learningRates: { 'actor-sft': 1e-2, 'actor-webrl': 1e-2, critic: 1e-3, orm: 1e-3 } },
      },
    });
    try {
      console.log(`campaign: ${((Date.now() - started) / 1000).toFixed(1)} s`);
      assert.equal(run.final.status, 'completed', JSON.stringify(run.final));
      const names = [0, 1, 2].map((k) => `${NAME}-p${k}-actor`);
      assert.deepEqual(run.manifests.map((m) => m.data.served?.actor.name), names);
      const requests = await server.requests();
      const loads = requests.filter((r) => r.path === '/v1/load_lora_adapter' && r.status === 200);
      assert.deepEqual(loads.map((r) => r.lora_name), names, 'each phase’s adapter loaded once, in order');

      // The adapter loaded under each phase's name is, file by file, the checkpoint webrl-torch stored.
      const stored: string[] = [];
      for (const manifest of run.manifests) {
        const served = manifest.data.served!.actor;
        assert.equal(served.checkpoint, manifest.data.carry.models.actor);
        const dir = join(scratch, `phase-${manifest.data.phase}`);
        await downloadCheckpoint(run.store, served.checkpoint, dir);
        const files = await sha256Files(dir);
        assert.ok('adapter_model.safetensors' in files && 'adapter_config.json' in files, Object.keys(files).join(', '));
        assert.deepEqual(loads.find((r) => r.lora_name === served.name)!.files, files, `${served.name} is byte for byte the trainer's output`);
        stored.push(dir);
      }

      // Every completion asked for the adapter served last: phase k's rollouts (and the scoring of their
      // records) for phase k-1's, its evaluation for its own; never the base model.
      let current: string | undefined;
      const byPhase = new Map<string, number>();
      for (const request of requests) {
        if (request.path === '/v1/load_lora_adapter' && request.status === 200) current = request.lora_name;
        if (request.path !== '/v1/completions') continue;
        assert.equal(request.model, current, `a completion named ${request.model} while ${current} was the latest adapter`);
        if (!request.echo) byPhase.set(request.model!, (byPhase.get(request.model!) ?? 0) + 1);
      }
      for (const name of names) assert.ok((byPhase.get(name) ?? 0) > 0, `generations under ${name}: ${JSON.stringify([...byPhase])}`);
      for (const k of [1, 2]) {
        let rollouts = 0;
        for await (const { key } of run.store.list(`campaigns/${NAME}/phase-${k}/rollouts/train/`)) if (/\/trajectories\/[^/]+\.json$/.test(key)) rollouts++;
        assert.ok(rollouts > 0, `phase ${k} rolled out`);
      }

      // On a fixed prompt, phase 1's adapter changes the log-probs of phase 0's (loaded again from the
      // store: the server unloaded it) and phase 0's those of the base model.
      await server.post('/load_lora_adapter', { lora_name: 'check-p0', lora_path: stored[0] });
      const logprobs = async (name: string) => {
        const reply = (await server.post('/completions', { model: name, prompt: PROMPT, echo: true, logprobs: 1, max_tokens: 0, temperature: 0 })) as {
          choices: { logprobs: { token_logprobs: (number | null)[] } }[];
        };
        return reply.choices[0]!.logprobs.token_logprobs.slice(1) as number[];
      };
      const [base, phase0, phase1] = [await logprobs(BASE_MODEL), await logprobs('check-p0'), await logprobs(names[1]!)];
      const change = (a: number[], b: number[]) => Math.max(...a.map((v, i) => Math.abs(v - b[i]!)));
      assert.ok(change(phase0, base) > 1e-3, `phase 0's adapter changes the base's log-probs by ${change(phase0, base)}`);
      assert.ok(change(phase1, phase0) > 1e-3, `phase 1's adapter changes phase 0's log-probs by ${change(phase1, phase0)}`);
    } finally {
      await run.close();
    }
  });
});
