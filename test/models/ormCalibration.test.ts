/**
 * The ORM's correction for task types it never trained on: cross-validation by task type finds the logit
 * offset that undoes a shift, a trained ORM's card carries it with the training task types, and `Orm`
 * applies it to unseen task types only.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadModel } from '../../models/checkpoint';
import { taskType } from '../../models/featurizer';
import { Orm } from '../../models/orm';
import type { ModelState } from '../../models/state';
import type { OutcomeExample } from '../../models/train/examples';
import { train } from '../../models/train/trainer';
import { CALIBRATION_FITS, calibrateUnseenTypes, type FoldFit } from '../../models/train/unseenTypeCalibration';
import { noisyTrajectories, outcomeExamples, TRAIN_TASKS } from './fixtures/data';

let dir: string;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'models-orm-calibration-'));
});

after(async () => {
  await rm(dir, { recursive: true, force: true });
});

const INTENTS = ['What is the price of the "Red Mug"?', 'Add the "Red Mug" to my wish list', 'Cancel my latest order', 'Subscribe to the newsletter'];

function outcome(intent: string, success: boolean): OutcomeExample {
  return { state: { intent, history: [], observation: { url: 'http://127.0.0.1/', title: 'Home', html: '<h1>Home</h1>', elements: [] } }, success };
}

/** Four task types, ten outcomes each, half of them successes. */
const EXAMPLES = INTENTS.flatMap((intent) => Array.from({ length: 10 }, (_, i) => outcome(intent, i % 2 === 0)));

describe('unseen task type calibration', () => {
  test('the fixture has four task types', () => {
    assert.equal(new Set(INTENTS.map(taskType)).size, 4);
  });

  test('finds the offset that undoes a shift of unseen types, from folds that hold out whole task types', () => {
    const fits: { trained: Set<string>; judged: Set<string> }[] = [];
    // A fold model that is right about every outcome but 2 logits too pessimistic (margin 1 either way).
    const shifted: FoldFit = (training, judged) => {
      const typesAt = (indices: number[]) => new Set(indices.map((i) => taskType(EXAMPLES[i]!.state.intent)));
      fits.push({ trained: typesAt(training), judged: typesAt(judged) });
      return judged.map((i) => (EXAMPLES[i]!.success ? 1 : -1) - 2);
    };
    const { calibration, metrics } = calibrateUnseenTypes(EXAMPLES, 7, shifted);
    assert.equal(fits.length, CALIBRATION_FITS);
    for (const fit of fits)
      assert.ok(
        [...fit.judged].every((type) => !fit.trained.has(type)),
        'a fold judges only task types its model did not train on',
      );
    assert.deepEqual(calibration.knownTaskTypes, [...new Set(INTENTS.map(taskType))].sort());
    // Every offset in (1, 3) makes all verdicts right; the smoothed accuracy peaks in the middle.
    assert.ok(Math.abs(calibration.unseenTypeLogitOffset - 2) < 0.15, `offset ${calibration.unseenTypeLogitOffset}`);
    assert.equal(metrics.unseenTypeCvAccuracy, 0.5);
    assert.equal(metrics.unseenTypeCvAccuracyCalibrated, 1);
    assert.equal(metrics.unseenTypeCvExamples, EXAMPLES.length * 2);
    assert.deepEqual(calibrateUnseenTypes(EXAMPLES, 7, shifted), { calibration, metrics });
  });

  test('no correction when there are fewer task types than folds', () => {
    const two = EXAMPLES.filter((e) => e.state.intent === INTENTS[0] || e.state.intent === INTENTS[1]);
    const { calibration } = calibrateUnseenTypes(two, 7, () => assert.fail('no fold model is trained'));
    assert.equal(calibration.unseenTypeLogitOffset, 0);
    assert.equal(calibration.knownTaskTypes.length, 2);
  });

  test('a trained ORM carries the correction in its card, and applies it to unseen task types only', async () => {
    // The shop has two task types; the same questions worded as "Tell me the cost of X" make a third.
    const examples = outcomeExamples([...(await noisyTrajectories(TRAIN_TASKS, 1, 0.3)), ...(await noisyTrajectories(TRAIN_TASKS, 2, 0.3))]).map(
      (example, i) =>
        i % 2 === 0 && example.state.intent.startsWith('What is the price of ')
          ? { ...example, state: { ...example.state, intent: example.state.intent.replace(/^What is the price of (.*)\?$/, 'Tell me the cost of $1') } }
          : example,
    );
    const path = join(dir, 'orm.onnx');
    const result = await train({ objective: 'orm', data: { records: examples }, outPath: path, seed: 3, epochs: 2, batchSize: 16 });
    const model = await loadModel(path, { kind: 'orm' });
    const trainedTypes = [...new Set(examples.map((e) => taskType(e.state.intent)))].sort();
    assert.equal(trainedTypes.length, 3);
    assert.deepEqual(model.card.calibration?.knownTaskTypes, trainedTypes);
    assert.equal(result.metrics.unseenTypeCvExamples, examples.length * 2);
    assert.equal(model.card.calibration?.unseenTypeLogitOffset, result.metrics.unseenTypeLogitOffset);

    const seen: ModelState = examples[0]!.state;
    const unseen: ModelState = { ...seen, intent: 'Translate the "Red Mug" listing into French' };
    assert.ok(!trainedTypes.includes(taskType(unseen.intent)));
    const offset = 1.5;
    const calibrated = new Orm({ ...model, card: { ...model.card, calibration: { knownTaskTypes: trainedTypes, unseenTypeLogitOffset: offset } } });
    const uncorrected = new Orm({ ...model, card: { ...model.card, calibration: undefined } });
    const [a, b] = await calibrated.judge([seen, unseen]);
    const [rawA, rawB] = await uncorrected.judge([seen, unseen]);
    const logit = (p: number) => Math.log(p / (1 - p));
    assert.equal(a!.pYes, rawA!.pYes);
    assert.ok(Math.abs(logit(b!.pYes) - logit(rawB!.pYes) - offset) < 1e-9);
    assert.equal(b!.reward, b!.pYes >= 0.5 ? 1 : 0);
  });
});
