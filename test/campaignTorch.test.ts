/**
 * The LLM campaign (test/harness/llmCampaign.ts) with the real parts: webrl-torch trains every model
 * (phase 0's SFT actor, critic and ORM, then each phase's critic and actor from training records), and
 * real vLLM (its CPU build, provisioned by the project) serves the actor, a tiny random Llama whose
 * tokenizer adds a BOS token as Llama-3's does, and loads each phase's adapter by its runtime LoRA API.
 * Between the campaign and vLLM a relay notes each request (test/harness/vllm.ts).
 *
 * vLLM is killed at the first request for phase 0's adapter and started again: it comes back with no
 * adapters, and the campaign loads the adapter again and finishes, losing nothing. The model's output is
 * garbage (a random model): what is checked is which model each request named and which weights were
 * loaded, not success. Phase 0's actor trains on an SFT file in WebRL's format beside the oracle's plans.
 * The critic filter of each RL phase asks `webrl-torch serve-critic` for the critic the phase before
 * trained (the `served` critic backend), and chooses the phase's tasks by its values. Each RL phase also
 * replays the oracle's demonstrations, so its actor has rows to learn from and its adapter differs.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@temporalio/client';
import { mostPromisingTasks, taskTemplate } from '../activities/campaign/mostPromisingTasks';
import type { EnvironmentTask } from '../env/backends/contract';
import { startCriticServer, type RunningCriticServer } from '../infra/criticServer';
import { trainingRecordsKey } from '../models/train/trainingRecord';
import { downloadCheckpoint } from '../storage/checkpoints';
import { ensureTrainerEnvironment } from '../trainers/torch/environment';
import { BASE_MODEL, runLlmCampaign, webrlTorchCommand } from './harness/llmCampaign';
import { startTestStack, type TestStack } from './harness/stack';
import { sha256Files, startRecordedVllm, tinyModel, TINY_CONTEXT, type RecordedVllm } from './harness/vllm';

const NAME = 'torch';
const PROMPT = 'Task Instruction: Buy a lamp\n\nRound 0\n\ndo(action="Click", element="3")';

describe('a campaign trained by webrl-torch and served by real vLLM', () => {
  let stack: TestStack;
  let client: Client;
  let python: string;
  let scratch: string;
  let vllm: RecordedVllm | undefined;
  let critic: RunningCriticServer | undefined;
  before(async () => {
    python = ensureTrainerEnvironment();
    scratch = await mkdtemp(join(tmpdir(), 'webrl-torch-campaign-'));
    stack = await startTestStack();
    client = await stack.client();
  });
  after(async () => {
    await vllm?.close();
    await critic?.stop();
    await stack?.stop();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  test('SFT and an RL phase: each phase acts with the adapter the one before trained, loaded as stored; a vLLM restart loses nothing', async () => {
    const model = tinyModel(); // one directory: the server's base and the trainer's --base-model
    vllm = await startRecordedVllm({ model, servedModelName: BASE_MODEL, maxLoraRank: 8, maxModelLen: TINY_CONTEXT, logFile: join(scratch, 'vllm.log') });
    const server = vllm;
    const criticLog = join(scratch, 'critic.log');
    const criticDir = join(scratch, 'critics');
    critic = await startCriticServer({ python, baseModel: model, checkpoints: criticDir, dtype: 'float32', logFile: criticLog });
    const started = Date.now();
    const names = [0, 1].map((k) => `${NAME}-p${k}-actor`);
    let restarted = false;
    // Phase 0's actor also trains on an SFT file in WebRL's format (LLaMA-Factory sharegpt).
    const sftFile = join(scratch, 'web_policy_sft.json');
    // With the released prompt format an entry is one human turn (the whole prompt) and its target.
    const entry = (prompt: string, action: string) => ({
      conversations: [
        { from: 'human', value: prompt },
        { from: 'gpt', value: action },
      ],
    });
    const page = '<html> <button id="3"> Go </button> </html>';
    const sftPairs = [
      [`Task Instruction: Buy a lamp\n\nRound 0\n\n${page}`, 'do(action="Click", element="3")'],
      [`Task Instruction: Buy a lamp\n\nRound 0\n\nBuy a lamp\n\nRound 1\n\n${page}`, 'exit(message="done")'],
      [`Task Instruction: Sell eggs\n\nRound 0\n\n${page}`, 'exit(message="sold")'],
    ];
    await writeFile(sftFile, JSON.stringify(sftPairs.map(([prompt, action]) => entry(prompt!, action!))));
    // One RL phase: unloading the adapters of older phases is test/deployModels.test.ts's (three phases on real vLLM).
    const run = await runLlmCampaign(stack, client, NAME, 'vllm-lora', {
      phases: 1,
      actor: { server, maxTokens: 24, timeoutMs: 120_000, sftData: { path: sftFile, format: 'webrl-sharegpt' } },
      trainer: { command: webrlTorchCommand(python, model), timeoutSeconds: 600 },
      campaign: {
        // Every RL phase replays the oracle's demonstrations (the whole rank band): rows with a positive
        // advantage, so its actor takes optimizer steps whatever the random model's own steps earned.
        phase: { tasksPerPhase: 2, rolloutShardSize: 2, candidateFactor: 2, replayRankBand: [0, 1] },
        environment: { testTasks: 2, demonstrationTasks: 4 },
        training: {
          replayDemonstrations: true,
          sftEpochs: 1,
          ormEpochs: 1,
          criticEpochs: 1,
          actorEpochs: 1,
          batchSize: 8,
          learningRates: { 'actor-sft': 1e-2, 'actor-webrl': 1e-2, critic: 1e-3, orm: 1e-3 },
        },
      },
      models: { critic: { backend: 'served', baseUrl: critic.baseUrl, sharedDir: criticDir, maxAttempts: 1, retryDelayMs: 0 } },
      // vLLM dies at the first request for phase 0's adapter and comes back without it.
      async whileRunning() {
        const deadline = Date.now() + 20 * 60_000;
        while (!server.requests.some((r) => r.path === '/v1/completions' && r.model === names[0])) {
          if (Date.now() > deadline) throw new Error(`no request for ${names[0]} within 20 minutes`);
          await delay(100);
        }
        await server.kill();
        await server.start();
        restarted = true;
      },
    });
    try {
      console.log(`campaign: ${((Date.now() - started) / 1000).toFixed(1)} s`);
      assert.ok(restarted);
      assert.equal(run.final.status, 'completed', JSON.stringify(run.final));
      assert.deepEqual(
        run.manifests.map((m) => m.data.served?.actor.name),
        names,
      );
      const requests = server.requests;
      const loads = requests.filter((r) => r.path === '/v1/load_lora_adapter' && r.status === 200);
      assert.deepEqual(
        loads.map((r) => r.loraName),
        [names[0], names[0], names[1]],
        'each phase’s adapter loaded once, phase 0’s again after the restart',
      );

      // Phase 0's actor trained on the oracle's demonstrations, then the file's three steps, each prompt as the file has it.
      const sftRecords: { id: string; prompt: string; response: string }[] = [];
      for await (const row of run.store.readJsonl<{ id: string; prompt: string; response: string }>(
        trainingRecordsKey(`campaigns/${NAME}/phase-0/demonstrations/actor-sft.jsonl`),
      ))
        sftRecords.push(row);
      const fromFile = sftRecords.filter((r) => r.id.startsWith('sft-data-'));
      assert.ok(
        sftRecords.length > fromFile.length && sftRecords.slice(0, -3).every((r) => r.id.startsWith('oracle-')),
        sftRecords.map((r) => r.id).join(', '),
      );
      assert.deepEqual(
        fromFile.map((r) => [r.prompt, r.response]),
        sftPairs,
      );

      // The adapter loaded under each phase's name is, file by file, the checkpoint webrl-torch stored.
      const stored: string[] = [];
      for (const manifest of run.manifests) {
        const served = manifest.data.served!.actor;
        assert.equal(served.checkpoint, manifest.data.carry.models.actor);
        const dir = join(scratch, `phase-${manifest.data.phase}`);
        await downloadCheckpoint(run.store, served.checkpoint, dir);
        const files = await sha256Files(dir);
        assert.ok('adapter_model.safetensors' in files && 'adapter_config.json' in files, Object.keys(files).join(', '));
        for (const load of loads.filter((r) => r.loraName === served.name))
          assert.deepEqual(load.files, files, `${served.name} is byte for byte the trainer's output`);
        stored.push(dir);
      }

      // Every completion vLLM answered asked for the adapter served last: phase k's rollouts (and the
      // scoring of their records) for phase k-1's, its evaluation for its own; never the base model.
      let current: string | undefined;
      const byPhase = new Map<string, number>();
      for (const request of requests) {
        if (request.path === '/v1/load_lora_adapter' && request.status === 200) current = request.loraName;
        if (request.path !== '/v1/completions' || request.status !== 200) continue;
        assert.equal(request.model, current, `a completion named ${request.model} while ${current} was the latest adapter`);
        if (!request.echo) byPhase.set(request.model!, (byPhase.get(request.model!) ?? 0) + 1);
      }
      for (const name of names) assert.ok((byPhase.get(name) ?? 0) > 0, `generations under ${name}: ${JSON.stringify([...byPhase])}`);
      // The records' log-probs came back through echo from a BOS-adding tokenizer: none failed.
      assert.ok(
        requests.some((r) => r.echo && r.status === 200),
        'log-probs were scored by echo',
      );
      let rollouts = 0;
      for await (const { key } of run.store.list(`campaigns/${NAME}/phase-1/rollouts/train/`)) if (/\/trajectories\/[^/]+\.json$/.test(key)) rollouts++;
      assert.equal(rollouts, 2, 'phase 1 rolled out both tasks');
      const sources = new Set<string>();
      for await (const row of run.store.readJsonl<{ source: string }>(trainingRecordsKey(`campaigns/${NAME}/phase-1/experience.jsonl`)))
        sources.add(row.source);
      assert.ok(sources.has('demonstration') && sources.has('rollout'), `phase 1 trained on ${[...sources].join(', ')}`);
      // Every step was scored, but those where the random model said nothing (no tokens to score).
      const failures = (await run.store.tryGetJson<{ reason: string }[]>(`campaigns/${NAME}/phase-1/replay-logprob-failures.json`)) ?? [];
      assert.deepEqual(
        failures.filter((f) => f.reason !== 'an empty action has no tokens to score'),
        [],
        'phase 1 scored every record',
      );

      // The RL phase's filter valued its 4 candidates with the critic phase 0 trained, loaded by the
      // server, and rolled out the 2 those values make the most promising.
      const criticOf = (phase: number) => run.manifests.find((m) => m.data.phase === phase)!.data.carry.models.critic;
      const loadedCritics = [...(await readFile(criticLog, 'utf8')).matchAll(/^loaded the critic (\S+) in /gm)].map((m) => m[1]);
      assert.deepEqual(loadedCritics, [criticOf(0)], 'the server loaded phase 0’s critic');
      const tasks = `campaigns/${NAME}/phase-1/tasks`;
      const values = await run.store.getJson<{ taskId: string | number; v1?: number; v2?: number; failed?: boolean }[]>(`${tasks}/critic-values.json`);
      assert.equal(values.length, 4, 'phase 1 valued its 4 candidates');
      assert.ok(
        values.every((v) => v.failed === undefined && typeof v.v1 === 'number'),
        JSON.stringify(values),
      );
      const candidates: EnvironmentTask[] = [];
      for await (const task of run.store.readJsonl<EnvironmentTask>(`${tasks}/candidates.jsonl`)) candidates.push(task);
      const value = new Map(values.map((v) => [String(v.taskId), Math.max(v.v1!, v.v2!)]));
      const chosen = mostPromisingTasks(candidates, {
        limit: 2,
        value: (task) => value.get(String(task.task_id))!,
        template: taskTemplate,
      });
      const kept: EnvironmentTask[] = [];
      for await (const task of run.store.readJsonl<EnvironmentTask>(`${tasks}/kept.jsonl`)) kept.push(task);
      assert.deepEqual(
        kept.map((t) => t.task_id),
        chosen.map((t) => t.task_id),
        'phase 1 rolled out the candidates its critic chose',
      );

      // On a fixed prompt, phase 1's adapter changes the log-probs of phase 0's (loaded again from the
      // store, under a name of its own) and phase 0's those of the base model.
      const post = async (path: string, body: object) => {
        const response = await fetch(`${server.baseUrl}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        const text = await response.text();
        assert.equal(response.status, 200, text);
        return path === '/completions' ? JSON.parse(text) : text; // vLLM's load answer is a plain sentence
      };
      await post('/load_lora_adapter', { lora_name: 'check-p0', lora_path: stored[0] });
      const logprobs = async (name: string) => {
        const reply = (await post('/completions', { model: name, prompt: PROMPT, echo: true, logprobs: 1, max_tokens: 0, temperature: 0 })) as {
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
