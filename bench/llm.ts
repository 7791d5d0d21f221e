/**
 * The LLM path's training loop on the local stack (test/harness/llmCampaign.ts): a completions actor
 * behind a vLLM-like server, an external trainer writing LoRA adapters, serving by vLLM's runtime LoRA
 * API; SFT and two RL phases.
 *
 *   llm.rollouts_on_trained_actor   share of the rollout steps of phases >= 2 that asked for the model
 *                                   deployed from the previous phase's trainer output (its adapter, as
 *                                   loaded, byte for byte the stored checkpoint); 1 when the loop is closed
 *   llm.deploy_seconds              median per phase of the deployModels activity (scheduled to completed)
 *   llm.train_seconds_per_1k_tokens webrl-torch (trainers/torch) training a tiny Llama on CPU, from its
 *                                   own bench (python -m webrl_torch.testing.bench, in the trainer's
 *                                   virtual environment, made on first use)
 *
 * Run: npm run bench:llm
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { campaignWorkflowId } from '../campaign/control';
import { downloadCheckpoint } from '../storage/checkpoints';
import { runLlmCampaign } from '../test/harness/llmCampaign';
import { startTestStack } from '../test/harness/stack';
import { ensureTrainerEnvironment, packageDir, run as runProgram } from '../trainers/torch/environment';

const NAME = 'bench-llm';

async function sameFiles(loaded: Map<string, Buffer>, dir: string): Promise<boolean> {
  const names = (await readdir(dir)).sort();
  if (names.join('\n') !== [...loaded.keys()].sort().join('\n')) return false;
  for (const name of names) if (!(await readFile(join(dir, name))).equals(loaded.get(name)!)) return false;
  return true;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

const stack = await startTestStack();
const scratch = await mkdtemp(join(tmpdir(), 'webrl-bench-llm-'));
try {
  const client = await stack.client();
  const since = new Date();
  const run = await runLlmCampaign(stack, client, NAME, 'vllm-lora', { phases: 2 });
  try {
    if (run.final.status !== 'completed') throw new Error(`the campaign ended ${run.final.status}`);
    let onTrained = 0;
    let total = 0;
    for (const manifest of run.manifests.filter((m) => m.data.phase >= 2)) {
      const previous = run.manifests.find((m) => m.data.phase === manifest.data.phase - 1)!.data.served!.actor;
      const stored = join(scratch, `phase-${manifest.data.phase - 1}`);
      await downloadCheckpoint(run.store, previous.checkpoint, stored);
      const loads = run.vllm.loads.filter((load) => load.name === previous.name);
      const faithful = loads.length === 1 && (await sameFiles(loads[0]!.files, stored));
      const models = await run.actedBy(manifest.data.phase, 'train');
      total += models.length;
      onTrained += faithful ? models.filter((model) => model === previous.name).length : 0;
    }

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
    console.log(`phases: ${run.manifests.length}; phase >= 2 rollout steps: ${total}; deployments: ${deploySeconds.length}`);
    console.log(`BENCH llm.rollouts_on_trained_actor ${total ? (onTrained / total).toFixed(3) : 'NaN'} fraction`);
    console.log(`BENCH llm.deploy_seconds ${median(deploySeconds).toFixed(3)} s`);
  } finally {
    await run.close();
  }
} finally {
  await rm(scratch, { recursive: true, force: true });
  await stack.stop();
}

// The PyTorch trainer's throughput, measured by its own bench (it prints its BENCH line).
if (runProgram(ensureTrainerEnvironment(), ['-m', 'webrl_torch.testing.bench'], packageDir) !== 0) process.exitCode = 1;
