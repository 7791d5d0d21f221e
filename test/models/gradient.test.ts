/**
 * The hand-written gradients (network backward pass x each objective) against central finite
 * differences, on a small network whose weights are all non-zero.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { FeatureBatch } from '../../models/featurizer';
import { backward, createNetwork, emptyGradient, forward, PARAMETER_NAMES, type Gradient, type Network, type ParameterName } from '../../models/network';
import { SeededRng } from '../../browser/rng';
import { logSoftmax } from '../../models/actor';
import { binaryLoss, demonstrationLoss, webrlActorLoss, type CandidateGroup, type LossResult } from '../../models/train/objectives';

const DIM = 64;
const WIDTH = 6;

function randomNetwork(outputs: number, seed: number): Network {
  const network = createNetwork({ dim: DIM, hidden: 4, outputs }, seed);
  const rng = new SeededRng(seed + 1);
  for (const name of PARAMETER_NAMES) {
    const data = network.params[name];
    for (let i = 0; i < data.length; i++) data[i] = (rng.next() - 0.5) * 0.8;
  }
  return network;
}

function randomBatch(rows: number, seed: number): FeatureBatch {
  const rng = new SeededRng(seed);
  const indices = new Int32Array(rows * WIDTH);
  const values = new Float32Array(rows * WIDTH);
  for (let i = 0; i < indices.length; i++) {
    // The last slot of each row is padding, as in real rows.
    if (i % WIDTH === WIDTH - 1) continue;
    indices[i] = 1 + Math.floor(rng.next() * (DIM - 1));
    values[i] = rng.next() < 0.7 ? 1 : rng.next();
  }
  return { rows, width: WIDTH, indices, values };
}

function analyticGradient(network: Network, batch: FeatureBatch, loss: (logits: Float64Array) => LossResult): Gradient {
  const pass = forward(network, batch);
  const gradient = emptyGradient(network.shape);
  backward(network, batch, pass, loss(pass.logits).dLogits, gradient);
  return gradient;
}

function gradientEntry(gradient: Gradient, network: Network, name: ParameterName, index: number): number {
  if (name === 'embedding' || name === 'wide') {
    const width = name === 'embedding' ? network.shape.hidden : network.shape.outputs;
    const slot = gradient.tables.features.indexOf(Math.floor(index / width));
    if (slot < 0) return 0;
    return (name === 'embedding' ? gradient.tables.embedding : gradient.tables.wide)[slot * width + (index % width)]!;
  }
  return gradient[name][index]!;
}

function checkGradient(network: Network, batch: FeatureBatch, loss: (logits: Float64Array) => LossResult): void {
  const gradient = analyticGradient(network, batch, loss);
  const lossAt = () => loss(forward(network, batch).logits).loss;
  const touched = [...new Set(batch.indices.filter((_, i) => batch.values[i] !== 0))].slice(0, 6);
  const entries: [ParameterName, number][] = [];
  for (const name of ['hiddenBias', 'outWeight', 'outBias'] as const) for (let i = 0; i < network.params[name].length; i++) entries.push([name, i]);
  for (const feature of touched) {
    for (let h = 0; h < network.shape.hidden; h++) entries.push(['embedding', feature * network.shape.hidden + h]);
    for (let o = 0; o < network.shape.outputs; o++) entries.push(['wide', feature * network.shape.outputs + o]);
  }
  let checked = 0;
  for (const [name, index] of entries) {
    const data = network.params[name];
    const original = data[index]!;
    data[index] = original + 1e-3;
    const plus = data[index]!;
    const lossPlus = lossAt();
    data[index] = original - 1e-3;
    const minus = data[index]!;
    const lossMinus = lossAt();
    data[index] = original;
    const numeric = (lossPlus - lossMinus) / (plus - minus);
    const analytic = gradientEntry(gradient, network, name, index);
    const scale = Math.max(1e-4, Math.abs(numeric) + Math.abs(analytic));
    assert.ok(Math.abs(numeric - analytic) / scale < 1e-3, `${name}[${index}]: analytic ${analytic}, numeric ${numeric}`);
    checked++;
  }
  assert.ok(checked > 30);
}

describe('gradients match finite differences', () => {
  test('behaviour cloning (softmax over candidates)', () => {
    const groups: CandidateGroup[] = [
      { offset: 0, count: 5, target: 2 },
      { offset: 5, count: 3, target: 0 },
      { offset: 8, count: 4, target: 3 },
    ];
    checkGradient(randomNetwork(1, 1), randomBatch(12, 2), (logits) => demonstrationLoss(logits, groups));
  });

  test('binary cross-entropy on two critic heads', () => {
    checkGradient(randomNetwork(2, 3), randomBatch(9, 4), (logits) => binaryLoss(logits, 2, [1, 0, 0, 1, 1, 0, 1, 0, 1]));
  });

  test('binary cross-entropy on the ORM head', () => {
    checkGradient(randomNetwork(1, 5), randomBatch(7, 6), (logits) => binaryLoss(logits, 1, [0, 1, 1, 0, 1, 1, 0]));
  });

  test('the WebRL actor objective (both beta regimes, both SmoothL1 branches, masked negatives)', () => {
    // Beta is a constant of the step; the references are placed relative to the current policy so that
    // no beta switches regime (or hits its cap) within the finite-difference step.
    const network = randomNetwork(1, 7);
    const batch = randomBatch(16, 8);
    const logits = forward(network, batch).logits;
    const groups: CandidateGroup[] = [
      { offset: 0, count: 4, target: 1 },
      { offset: 4, count: 2, target: logits[4]! > logits[5]! ? 0 : 1 },
      { offset: 6, count: 5, target: [6, 7, 8, 9, 10].reduce((low, j) => (logits[j]! < logits[low]! ? j : low), 6) - 6 },
      { offset: 11, count: 5, target: 2 },
    ];
    const logPi = (group: CandidateGroup) => logSoftmax(logits.subarray(group.offset, group.offset + group.count))[group.target]!;
    const samples = [
      { group: groups[0]!, refLogProb: logPi(groups[0]!) - 0.3, advantage: 1, tokens: 1 },
      { group: groups[1]!, refLogProb: logPi(groups[1]!) - 1, advantage: 1, tokens: 10 },
      { group: groups[2]!, refLogProb: logPi(groups[2]!) + 0.5, advantage: 1, tokens: 1 },
      { group: groups[3]!, refLogProb: Math.log(0.5), advantage: -0.6, tokens: 1 },
    ];
    const { betas, logRatios } = webrlActorLoss(logits, samples);
    assert.deepEqual(betas.slice(0, 3), [1, 5, 1]);
    assert.ok(Math.abs(betas[2]! * logRatios[2]! - 1) >= 1, 'the third sample is on the linear branch of SmoothL1');
    checkGradient(network, batch, (z) => webrlActorLoss(z, samples));
  });
});
