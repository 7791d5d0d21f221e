/**
 * Checkpoints: for each model kind, the exported ONNX graph run by onnxruntime (batched) matches the
 * in-memory TypeScript model within 1e-5, the card describes it, and loading refuses tampered bytes or
 * a different featurizer version.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Actor } from '../../models/actor';
import { cardPath, inMemoryModel, loadModel, networkShape, saveModel, type ModelKind } from '../../models/checkpoint';
import { Critic } from '../../models/critic';
import { FEATURIZER_VERSION, STATE_ROW_WIDTH, ACTOR_ROW_WIDTH } from '../../models/featurizer';
import { createNetwork, PARAMETER_NAMES, type Network } from '../../models/network';
import { Orm } from '../../models/orm';
import { SeededRng } from '../../browser/rng';
import type { ModelState } from '../../models/state';
import { noisyTrajectories, ALL_TASKS } from './fixtures/data';

let dir: string;
let states: ModelState[];

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'models-checkpoint-'));
  const trajectories = await noisyTrajectories(ALL_TASKS.slice(0, 12), 3, 0.3);
  states = trajectories.flatMap((trajectory) => [...trajectory.steps.map((step) => step.state), trajectory.final]);
});

after(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A network with every weight random (small, as trained weights are), so every feature matters. */
function randomNetwork(kind: ModelKind, seed: number): Network {
  const network = createNetwork(networkShape(kind, 8), seed);
  const rng = new SeededRng(seed);
  for (const name of PARAMETER_NAMES) {
    const data = network.params[name];
    for (let i = 0; i < data.length; i++) data[i] = (rng.next() - 0.5) * 0.2;
  }
  return network;
}

const card = (kind: ModelKind) => ({
  kind,
  seed: 7,
  training: { data: ['campaigns/test/data.jsonl'], objective: 'none', steps: 0, examples: 0, hyperparameters: {} },
  metrics: { example: 1 },
});

function maxDifference(a: ArrayLike<number>, b: ArrayLike<number>): number {
  assert.equal(a.length, b.length);
  let max = 0;
  for (let i = 0; i < a.length; i++) max = Math.max(max, Math.abs(a[i]! - b[i]!));
  return max;
}

describe('ONNX export and reload match the in-memory model within 1e-5', () => {
  test('actor: scores and log-probs of every candidate, batched over many states', async () => {
    const network = randomNetwork('actor', 11);
    const path = join(dir, 'actor.onnx');
    const saved = await saveModel(path, network, card('actor'));
    const loaded = await loadModel(path, { kind: 'actor' });
    assert.equal(loaded.engine.kind, 'onnx');
    const fromOnnx = await new Actor(loaded).distributions(states);
    const inMemory = await new Actor(inMemoryModel(network, 'actor')).distributions(states);
    let candidates = 0;
    fromOnnx.forEach((distribution, i) => {
      candidates += distribution.candidates.length;
      assert.ok(maxDifference(distribution.scores, inMemory[i]!.scores) < 1e-5);
      assert.ok(maxDifference(distribution.logProbs, inMemory[i]!.logProbs) < 1e-5);
    });
    assert.ok(candidates > 1000, `${candidates} candidates compared`);
    assert.equal(saved.featurizer.version, FEATURIZER_VERSION);
    assert.deepEqual(
      saved.onnx.inputs.map((input) => input.shape),
      [
        ['n', ACTOR_ROW_WIDTH],
        ['n', ACTOR_ROW_WIDTH],
      ],
    );
    assert.deepEqual(saved.training.data, ['campaigns/test/data.jsonl']);
  });

  test('critic: both heads', async () => {
    const network = randomNetwork('critic', 12);
    const path = join(dir, 'critic.onnx');
    const saved = await saveModel(path, network, card('critic'));
    const fromOnnx = await new Critic(await loadModel(path, { kind: 'critic' })).values(states);
    const inMemory = await new Critic(inMemoryModel(network, 'critic')).values(states);
    assert.ok(
      maxDifference(
        fromOnnx.map((v) => v.v1),
        inMemory.map((v) => v.v1),
      ) < 1e-5,
    );
    assert.ok(
      maxDifference(
        fromOnnx.map((v) => v.v2),
        inMemory.map((v) => v.v2),
      ) < 1e-5,
    );
    assert.ok(
      fromOnnx.some((v) => v.v1 !== v.v2),
      'the heads differ',
    );
    assert.deepEqual(saved.onnx.output, { name: 'critic_values', type: 'float32', shape: ['n', 2] });
    assert.deepEqual(saved.onnx.inputs[0]!.shape, ['n', STATE_ROW_WIDTH]);
  });

  test('ORM: P(YES)', async () => {
    const network = randomNetwork('orm', 13);
    const path = join(dir, 'orm.onnx');
    await saveModel(path, network, card('orm'));
    const fromOnnx = await new Orm(await loadModel(path, { kind: 'orm' })).judge(states);
    const inMemory = await new Orm(inMemoryModel(network, 'orm')).judge(states);
    assert.ok(
      maxDifference(
        fromOnnx.map((v) => v.pYes),
        inMemory.map((v) => v.pYes),
      ) < 1e-5,
    );
    assert.ok(new Set(fromOnnx.map((v) => v.pYes.toFixed(4))).size > 5, 'outputs vary with the input');
  });
});

describe('loading refuses what it cannot trust', () => {
  test('a card of another kind, tampered bytes, another featurizer version', async () => {
    const path = join(dir, 'orm-guard.onnx');
    await saveModel(path, randomNetwork('orm', 14), card('orm'));
    await assert.rejects(loadModel(path, { kind: 'critic' }), /expected a critic checkpoint, got a orm/);

    const original = await readFile(cardPath(path), 'utf8');
    await writeFile(cardPath(path), original.replace(FEATURIZER_VERSION, 'webrl-hashed-features/0'));
    await assert.rejects(loadModel(path), /trained with featurizer webrl-hashed-features\/0/);
    await writeFile(cardPath(path), original);

    const bytes = await readFile(path);
    bytes[bytes.length - 1] = bytes[bytes.length - 1]! ^ 0xff;
    await writeFile(path, bytes);
    await assert.rejects(loadModel(path), /do not match the card's sha256/);
  });
});
