/**
 * The double critic: trained on Monte-Carlo-return labels of the simulated shop's rollouts it ranks
 * held-out states by success (ROC AUC), and the curriculum band keeps a task when either head is in
 * [0.05, 0.75].
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadModel } from '../../models/checkpoint';
import { Critic, criticValues, keepForCurriculum } from '../../models/critic';
import { rocAuc } from '../../models/metrics';
import { train } from '../../models/train/trainer';
import { noisyTrajectories, TEST_TASKS, TRAIN_TASKS, valueExamples } from './fixtures/data';

let dir: string;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'models-critic-'));
});

after(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('critic', () => {
  test('ranks held-out states by their Monte-Carlo outcome', async () => {
    // A random first action (half the time) dooms the episode; afterwards the state shows whether it is on track.
    const trainSet = valueExamples([...(await noisyTrajectories(TRAIN_TASKS, 1, 0.5, 1)), ...(await noisyTrajectories(TRAIN_TASKS, 2, 0.5, 1))]);
    const result = await train({ objective: 'critic', data: { records: trainSet }, outPath: join(dir, 'critic.onnx'), seed: 1, epochs: 2, batchSize: 16 });
    assert.equal(result.card?.network.outputs, 2);
    const critic = new Critic(await loadModel(join(dir, 'critic.onnx'), { kind: 'critic' }));
    const heldOut = valueExamples([...(await noisyTrajectories(TEST_TASKS, 3, 0.5, 1)), ...(await noisyTrajectories(TEST_TASKS, 4, 0.5, 1))]);
    const values = await critic.values(heldOut.map((example) => example.state));
    const labels = heldOut.map((example) => example.mcReturn > 0);
    assert.ok(labels.some(Boolean) && !labels.every(Boolean));
    const auc = rocAuc(
      values.map((v) => v.value),
      labels,
    );
    assert.ok(auc > 0.85, `held-out ROC AUC ${auc}`);
    assert.ok(values.every((v) => v.value === Math.min(v.v1, v.v2) && v.value > 0 && v.value < 1));
  });

  test('the curriculum band [0.05, 0.75] on either head', () => {
    assert.equal(keepForCurriculum(criticValues(0.5, 0.9)), true);
    assert.equal(keepForCurriculum(criticValues(0.9, 0.04)), false);
    assert.equal(keepForCurriculum(criticValues(0.8, 0.76)), false);
    assert.equal(keepForCurriculum(criticValues(0.01, 0.05)), true);
  });
});
