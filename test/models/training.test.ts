/**
 * The trainer: the same seed gives the same weights, a run stopped at step k and resumed ends with the
 * weights of an uninterrupted run (for all three models), the worker thread reports progress while the
 * caller's event loop stays free, and a worker killed mid-run resumes from its last checkpoint.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sha256 } from '../../models/checkpoint';
import type { Objective } from '../../models/train/trainerContract';
import { runTrainingInWorker, TrainingAbortedError } from '../../models/train/runTraining';
import { train, type TrainingJob, type TrainingProgress } from '../../models/train/trainer';
import { demonstrations, noisyTrajectories, outcomeExamples, TRAIN_TASKS, valueExamples } from './fixtures/data';

let dir: string;
const data: Partial<Record<Objective, string>> = {};

async function writeJsonl(name: string, records: readonly unknown[]): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, records.map((record) => JSON.stringify(record)).join('\n') + '\n');
  return path;
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'models-training-'));
  const tasks = TRAIN_TASKS.slice(0, 16);
  const trajectories = await noisyTrajectories(tasks, 5, 0.35);
  data['actor-sft'] = await writeJsonl('demos.jsonl', await demonstrations(tasks));
  data.critic = await writeJsonl('values.jsonl', valueExamples(trajectories));
  data.orm = await writeJsonl('outcomes.jsonl', outcomeExamples(trajectories));
});

after(async () => {
  await rm(dir, { recursive: true, force: true });
});

function job(objective: Objective, name: string, overrides: Partial<TrainingJob> = {}): TrainingJob {
  return {
    objective,
    data: { path: data[objective]! },
    outPath: join(dir, `${name}.onnx`),
    seed: 42,
    steps: 12,
    batchSize: 8,
    hidden: 4,
    checkpointEvery: 5,
    ...overrides,
  };
}

const weightsOf = async (path: string) => sha256(await readFile(path));

for (const objective of ['actor-sft', 'critic', 'orm'] as const) {
  describe(`${objective}: determinism and resume`, () => {
    test('same seed, same weights; another seed, other weights', async () => {
      const first = await train(job(objective, `${objective}-a`));
      const second = await train(job(objective, `${objective}-b`));
      const other = await train(job(objective, `${objective}-c`, { seed: 43 }));
      assert.equal(first.status, 'completed');
      assert.equal(await weightsOf(join(dir, `${objective}-a.onnx`)), await weightsOf(join(dir, `${objective}-b.onnx`)));
      assert.notEqual(await weightsOf(join(dir, `${objective}-a.onnx`)), await weightsOf(join(dir, `${objective}-c.onnx`)));
      assert.deepEqual(first.metrics, second.metrics);
      assert.notDeepEqual(first.metrics, other.metrics);
    });

    test('train 12 steps = train 5, checkpoint, resume for 7', async () => {
      const stopped = await train(job(objective, `${objective}-r`, { stopAfterStep: 5 }));
      assert.deepEqual([stopped.status, stopped.step], ['stopped', 5]);
      const resumed = await train(job(objective, `${objective}-r`, { resume: true }));
      assert.deepEqual([resumed.status, resumed.step], ['completed', 12]);
      assert.equal(await weightsOf(join(dir, `${objective}-r.onnx`)), await weightsOf(join(dir, `${objective}-a.onnx`)));
      assert.equal(resumed.card?.training.steps, 12);
    });
  });
}

describe('the training job', () => {
  test('refuses to resume a checkpoint of a different job', async () => {
    await train(job('critic', 'mismatch', { stopAfterStep: 3 }));
    await assert.rejects(train(job('critic', 'mismatch', { resume: true, learningRate: 0.5 })), /belongs to a different job/);
  });

  test('names the line of a bad record', async () => {
    const bad = await writeJsonl('bad.jsonl', [
      { state: { intent: 'x', history: [], observation: { url: '', title: '', html: '', elements: [] } }, mcReturn: 1 },
      { state: {}, mcReturn: 'high' },
    ]);
    await assert.rejects(train({ ...job('critic', 'bad'), data: { path: bad } }), /bad\.jsonl: record 2: state\.intent/);
  });

  test('runs in a worker thread with progress callbacks while the caller stays responsive, same weights as in-process', async () => {
    const progress: TrainingProgress[] = [];
    const checkpoints: number[] = [];
    let ticks = 0;
    const heartbeat = setInterval(() => ticks++, 5);
    try {
      const result = await runTrainingInWorker(job('actor-sft', 'worker'), {
        onProgress: (p) => progress.push(p),
        onCheckpoint: (c) => checkpoints.push(c.step),
      });
      assert.equal(result.status, 'completed');
    } finally {
      clearInterval(heartbeat);
    }
    assert.ok(ticks > 0, 'the caller event loop ran while the worker trained');
    assert.deepEqual(
      progress.filter((p) => p.phase === 'training').map((p) => p.step),
      Array.from({ length: 12 }, (_, i) => i + 1),
    );
    assert.ok(progress.every((p) => p.phase !== 'training' || (typeof p.loss === 'number' && p.totalSteps === 12)));
    assert.deepEqual(checkpoints, [5, 10, 12]);
    assert.equal(await weightsOf(join(dir, 'worker.onnx')), await weightsOf(join(dir, 'actor-sft-a.onnx')));
  });

  test('a worker killed after a checkpoint resumes to the uninterrupted result', async () => {
    const long = job('actor-sft', 'killed', { steps: 40, checkpointEvery: 4 });
    const controller = new AbortController();
    await assert.rejects(
      runTrainingInWorker(long, { signal: controller.signal, onCheckpoint: () => controller.abort() }),
      (error: unknown) => error instanceof TrainingAbortedError,
    );
    const resumed = await runTrainingInWorker({ ...long, resume: true });
    assert.equal(resumed.step, 40);
    await train({ ...long, outPath: join(dir, 'uninterrupted.onnx') });
    assert.equal(await weightsOf(join(dir, 'killed.onnx')), await weightsOf(join(dir, 'uninterrupted.onnx')));
  });

  test('a failing job rejects with its reason', async () => {
    await assert.rejects(
      runTrainingInWorker({ ...job('actor-webrl', 'no-reference'), data: { records: [] } }),
      /training failed: an actor-webrl job needs `reference` and `critic`/,
    );
  });
});
