/**
 * The ORM: trained on labelled final states of the simulated shop's trajectories, it judges held-out
 * trajectories; reward is 1 exactly when P(YES) >= 0.5.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadModel } from '../../models/checkpoint';
import { accuracy } from '../../models/metrics';
import { Orm, verdict } from '../../models/orm';
import { train } from '../../models/train/trainer';
import { noisyTrajectories, outcomeExamples, TEST_TASKS, TRAIN_TASKS } from './fixtures/data';

let dir: string;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'models-orm-'));
});

after(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('ORM', () => {
  test('judges held-out trajectories', async () => {
    const trainSet = outcomeExamples([
      ...(await noisyTrajectories(TRAIN_TASKS, 1, 0.25)),
      ...(await noisyTrajectories(TRAIN_TASKS, 2, 0.25)),
      ...(await noisyTrajectories(TRAIN_TASKS, 3, 0.25)),
    ]);
    await train({ objective: 'orm', data: { records: trainSet }, outPath: join(dir, 'orm.onnx'), seed: 1, epochs: 6, batchSize: 16 });
    const orm = new Orm(await loadModel(join(dir, 'orm.onnx'), { kind: 'orm' }));
    const heldOut = outcomeExamples([...(await noisyTrajectories(TEST_TASKS, 4, 0.25)), ...(await noisyTrajectories(TEST_TASKS, 5, 0.25))]);
    const verdicts = await orm.judge(heldOut.map((example) => example.state));
    const labels = heldOut.map((example) => example.success);
    assert.ok(labels.some(Boolean) && !labels.every(Boolean));
    const score = accuracy(
      verdicts.map((v) => v.pYes),
      labels,
    );
    assert.ok(score >= 0.85, `held-out accuracy ${score}`);
    assert.ok(verdicts.every((v) => v.reward === (v.pYes >= 0.5 ? 1 : 0)));
  });

  test('reward = 1 exactly when P(YES) >= 0.5', () => {
    assert.deepEqual([verdict(0.5).reward, verdict(0.4999).reward, verdict(0.93).reward], [1, 0, 1]);
  });
});
