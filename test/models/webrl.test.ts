/**
 * The WebRL actor objective: its advantage and beta rules, one step on a fixed batch raising log pi of
 * the positive-advantage actions, the KL to the reference shrinking as beta grows, and the full
 * actor-webrl job (reference + critic checkpoints) being deterministic and resumable.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { candidateBatch, candidateIndex, logSoftmax } from '../../models/actor';
import { sha256 } from '../../models/checkpoint';
import { sigmoid } from '../../models/engine';
import { featurizeStates } from '../../models/featurizer';
import { cloneNetwork, forward, type Network } from '../../models/network';
import { importOnnx } from '../../models/onnxGraph';
import type { WebRLStepExample } from '../../models/train/examples';
import { NEGATIVE_ADVANTAGE, POSITIVE_ADVANTAGE, webrlAdvantage, webrlBeta, type BetaRule } from '../../models/train/objectives';
import { adamStep, createAdamState, DEFAULT_ADAM } from '../../models/train/optimizer';
import { prepareTask } from '../../models/train/prepare';
import { train } from '../../models/train/trainer';
import { demonstrations, noisyTrajectories, TRAIN_TASKS, valueExamples, webrlSteps } from './fixtures/data';

let dir: string;
let reference: Network;
let critic: Network;
let steps: WebRLStepExample[];

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'models-webrl-'));
  const tasks = TRAIN_TASKS.slice(0, 12);
  const trajectories = await noisyTrajectories(tasks, 9, 0.4);
  // A weak reference (few SFT steps) leaves room to move; the critic is trained on the same rollouts.
  await train({
    objective: 'actor-sft',
    data: { records: await demonstrations(tasks) },
    outPath: join(dir, 'reference.onnx'),
    seed: 1,
    steps: 6,
    batchSize: 8,
    hidden: 4,
    learningRate: 0.02,
  });
  await train({
    objective: 'critic',
    data: { records: valueExamples(trajectories) },
    outPath: join(dir, 'critic.onnx'),
    seed: 1,
    steps: 30,
    batchSize: 16,
    hidden: 4,
  });
  reference = importOnnx(new Uint8Array(await readFile(join(dir, 'reference.onnx')))).network;
  critic = importOnnx(new Uint8Array(await readFile(join(dir, 'critic.onnx')))).network;
  // The objective masks actions outside the candidate set; these tests look at the ones it trains.
  steps = webrlSteps(trajectories).filter((step) => candidateIndex(candidateBatch([step.state]).candidates[0]!, step.response) >= 0);
});

after(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** log pi(a|s) of each step's action under `network`. */
function actionLogProbs(network: Network, examples: readonly WebRLStepExample[]): number[] {
  const { candidates, offsets, batch } = candidateBatch(examples.map((example) => example.state));
  const { logits } = forward(network, batch);
  return examples.map((example, i) => logSoftmax(logits.subarray(offsets[i]!, offsets[i + 1]!))[candidateIndex(candidates[i]!, example.response)]!);
}

/** Mean over states of KL(pi || pi_ref) over the candidate set. */
function meanKl(network: Network, examples: readonly WebRLStepExample[]): number {
  const { offsets, batch } = candidateBatch(examples.map((example) => example.state));
  const current = forward(network, batch).logits;
  const ref = forward(reference, batch).logits;
  let total = 0;
  for (let i = 0; i < examples.length; i++) {
    const p = logSoftmax(current.subarray(offsets[i]!, offsets[i + 1]!));
    const q = logSoftmax(ref.subarray(offsets[i]!, offsets[i + 1]!));
    for (let j = 0; j < p.length; j++) total += Math.exp(p[j]!) * (p[j]! - q[j]!);
  }
  return total / examples.length;
}

/** The binarised advantage of each step, from the critic's min(v1, v2) as the trainer computes it. */
function advantages(examples: readonly WebRLStepExample[]): number[] {
  const value = (state: WebRLStepExample['state']) => {
    const { logits } = forward(critic, featurizeStates([state]));
    return Math.min(sigmoid(logits[0]!), sigmoid(logits[1]!));
  };
  return examples.map((e) =>
    webrlAdvantage({ value: value(e.state), nextValue: e.nextState ? value(e.nextState) : 0, reward: e.reward, mcReturn: e.mcReturn }),
  );
}

function trainSteps(examples: readonly WebRLStepExample[], rule: BetaRule, count: number, learningRate: number): Network {
  const network = cloneNetwork(reference);
  const adam = createAdamState(network);
  const task = prepareTask({ objective: 'actor-webrl', examples: [...examples] }, { reference, critic }, rule);
  const all = Array.from({ length: task.size }, (_, i) => i);
  for (let i = 0; i < count; i++) adamStep(network, adam, task.lossAndGradient(network, all).gradient, { learningRate, ...DEFAULT_ADAM });
  return network;
}

describe('advantage and beta rules (webrl.md §1)', () => {
  test('advantage = clip(nv - v - 0.05 + reward + mc_return, -1, 1), binarised to +1 / -0.6', () => {
    assert.equal(webrlAdvantage({ value: 0.5, nextValue: 0.6, reward: 0, mcReturn: 0 }), POSITIVE_ADVANTAGE);
    assert.equal(webrlAdvantage({ value: 0.5, nextValue: 0.5, reward: 0, mcReturn: 0 }), NEGATIVE_ADVANTAGE);
    assert.equal(webrlAdvantage({ value: 0.9, nextValue: 0, reward: 1, mcReturn: 1 }), POSITIVE_ADVANTAGE);
    assert.equal(webrlAdvantage({ value: 0.05, nextValue: 0, reward: 0, mcReturn: 0 }), NEGATIVE_ADVANTAGE);
    assert.equal(webrlAdvantage({ value: 0, nextValue: 0.05, reward: 0, mcReturn: 0 }), POSITIVE_ADVANTAGE);
  });

  test('beta = 5 for confident-positive or unlikely-negative samples, else 1, capped at |adv / log_ratio|', () => {
    assert.equal(webrlBeta(1, 0.85, 0.01), 5);
    assert.equal(webrlBeta(1, 0.5, 0.01), 1);
    assert.equal(webrlBeta(-0.6, 0.5, 0.01), 5);
    assert.equal(webrlBeta(-0.6, 0.95, 0.01), 1);
    assert.equal(webrlBeta(1, 0.85, 0.5), 2);
    assert.equal(webrlBeta(1, 0.85, 0), 5);
  });
});

describe('the WebRL actor objective on a fixed batch', () => {
  test('one training step raises log pi of every positive-advantage action', () => {
    const batch = steps.slice(0, 24);
    const adv = advantages(batch);
    assert.ok(adv.some((a) => a > 0) && adv.some((a) => a < 0), 'the batch mixes advantages');
    const before = actionLogProbs(reference, batch);
    const after = actionLogProbs(trainSteps(batch, { low: 1, high: 5 }, 1, 0.01), batch);
    const positives = adv.flatMap((a, i) => (a > 0 ? [i] : []));
    for (const i of positives) assert.ok(after[i]! > before[i]!, `step ${i}: log pi ${before[i]} -> ${after[i]}`);
  });

  test('the KL to the reference, and the positive log-ratios, shrink as beta grows', () => {
    // Adam with a small learning rate, as the objective is meant to be run (the repository uses 1e-6 on LLMs).
    const batch = steps.slice(0, 24);
    const adv = advantages(batch);
    const positives = batch.filter((_, i) => adv[i]! > 0);
    const referenceLogProbs = actionLogProbs(reference, positives);
    const results = [0.5, 2, 8].map((beta) => {
      const network = trainSteps(batch, { low: beta, high: beta }, 150, 0.002);
      const ratios = actionLogProbs(network, positives).map((lp, i) => lp - referenceLogProbs[i]!);
      return { kl: meanKl(network, positives), ratio: ratios.reduce((a, b) => a + b, 0) / ratios.length };
    });
    const [low, mid, high] = results as [(typeof results)[0], (typeof results)[0], (typeof results)[0]];
    assert.ok(low.kl > mid.kl && mid.kl > high.kl && high.kl > 0, `KL by beta 0.5, 2, 8: ${results.map((r) => r.kl).join(', ')}`);
    assert.ok(low.ratio > mid.ratio && mid.ratio > high.ratio && high.ratio > 0, `log-ratios: ${results.map((r) => r.ratio).join(', ')}`);
  });
});

describe('the actor-webrl job', () => {
  test('is deterministic and resumable with reference and critic checkpoints', async () => {
    const job = {
      objective: 'actor-webrl' as const,
      data: { records: steps },
      reference: join(dir, 'reference.onnx'),
      critic: join(dir, 'critic.onnx'),
      seed: 3,
      steps: 10,
      batchSize: 8,
      checkpointEvery: 4,
    };
    const full = await train({ ...job, outPath: join(dir, 'webrl-full.onnx') });
    await train({ ...job, outPath: join(dir, 'webrl-split.onnx'), stopAfterStep: 4 });
    await train({ ...job, outPath: join(dir, 'webrl-split.onnx'), resume: true });
    const weights = async (name: string) => sha256(await readFile(join(dir, name)));
    assert.equal(await weights('webrl-full.onnx'), await weights('webrl-split.onnx'));
    assert.equal(full.card?.training.reference, job.reference);
    assert.ok((full.metrics.positiveAdvantageShare ?? 0) > 0);
  });
});
