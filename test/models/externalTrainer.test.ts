/**
 * The external trainer runner against a small script standing in for a GPU trainer: inputs staged from
 * the store, outputs uploaded back, logs streamed, PROGRESS lines turned into callbacks, and failures
 * (non-zero exit, timeout, missing output, bad template, missing program) reported clearly.
 */
import { describe, test } from 'node:test';
import { createHash } from 'node:crypto';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ExternalTrainerError, runExternalTrainer, splitCommand, TrainerInterruptedError, type FileStore } from '../../models/remote/externalTrainer';
import { parseProgressLine, timeLeftEstimator, type TrainerProgress } from '../../models/remote/trainerProgress';
import { PERMANENT_ERROR_TYPES } from '../../workflows/retryPolicies';

const SCRIPT = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'fakeTrainer.mjs');

const info = (key: string, body: string) => ({ key, bytes: Buffer.byteLength(body), sha256: createHash('sha256').update(body).digest('hex') });

/** An in-memory artifact store. */
function memoryStore(objects: Record<string, string>): FileStore & { objects: Map<string, string> } {
  const map = new Map(Object.entries(objects));
  return {
    objects: map,
    async downloadFile(key, path) {
      const body = map.get(key);
      if (body === undefined) throw new Error(`no object ${key}`);
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, body);
      return info(key, body);
    },
    async uploadFile(key, path) {
      const body = await readFile(path, 'utf8');
      map.set(key, body);
      return info(key, body);
    },
    async putJson(key, value) {
      const body = `${JSON.stringify(value)}\n`;
      map.set(key, body);
      return info(key, body);
    },
    async tryGetJson<T>(key: string) {
      const body = map.get(key);
      return body === undefined ? undefined : (JSON.parse(body) as T);
    },
  };
}

const command = (mode: string) => `${process.execPath} '${SCRIPT}' --data {data} --out {out} --mode ${mode}`;
const inputs = { data: 'campaigns/c/phase-1/experience.jsonl' };
const outputs = { out: 'campaigns/c/phase-1/checkpoints/actor' };
const store = () => memoryStore({ 'campaigns/c/phase-1/experience.jsonl': '{"a":1}\n{"a":2}\n{"a":3}\n' });

async function trainerDirs(): Promise<string[]> {
  return (await readdir(tmpdir())).filter((name) => name.startsWith('webrl-trainer-'));
}

describe('external trainer', () => {
  test('stages inputs, streams logs and progress, uploads the output directory', async () => {
    const before = await trainerDirs();
    const files = store();
    const logs: [string, string][] = [];
    const progress: TrainerProgress[] = [];
    const result = await runExternalTrainer({
      command: command('ok'),
      inputs,
      outputs,
      store: files,
      env: { WEBRL_TRAINER_FLAG: 'on' },
      onLog: (line, stream) => logs.push([stream, line]),
      onProgress: (reported) => progress.push(reported),
    });
    assert.deepEqual(progress, [{ fraction: 0.25, step: 1, totalSteps: 4 }, { fraction: 0.5, step: 2, totalSteps: 4 }, { fraction: 1 }]);
    assert.ok(logs.some(([stream, line]) => stream === 'stdout' && line === 'loaded 3 examples'));
    assert.ok(logs.some(([stream, line]) => stream === 'stderr' && line === 'warming up (stderr)'));
    assert.ok(logs.some(([, line]) => line === 'seen env: on'));
    assert.deepEqual(
      result.uploaded.out!.map((object) => object.key),
      [
        'campaigns/c/phase-1/checkpoints/actor/model.onnx',
        'campaigns/c/phase-1/checkpoints/actor/tokenizer/vocab.json',
        'campaigns/c/phase-1/checkpoints/actor.files.json',
      ],
    );
    assert.equal(files.objects.get('campaigns/c/phase-1/checkpoints/actor/model.onnx'), 'weights for 3 examples');
    assert.deepEqual(await trainerDirs(), before, 'the temporary directory is removed');
  });

  test('a directory checkpoint written by one run is staged as a directory by the next', async () => {
    const files = store();
    await runExternalTrainer({ command: command('ok'), inputs, outputs, store: files });
    const listing = JSON.parse(files.objects.get('campaigns/c/phase-1/checkpoints/actor.files.json')!);
    assert.deepEqual(
      listing.files.map((file: { path: string }) => file.path),
      ['model.onnx', 'tokenizer/vocab.json'],
    );
    const seen: string[] = [];
    await runExternalTrainer({
      command: `${command('ok')} --init {init}`,
      inputs: { ...inputs, init: 'campaigns/c/phase-1/checkpoints/actor' },
      outputs: { out: 'campaigns/c/phase-2/checkpoints/actor' },
      store: files,
      onLog: (line) => seen.push(line),
    });
    assert.ok(seen.includes('init files: model.onnx,tokenizer'), seen.join('\n'));
    // A corrupted file is caught by its checksum.
    files.objects.set('campaigns/c/phase-1/checkpoints/actor/model.onnx', 'tampered');
    await assert.rejects(
      runExternalTrainer({ command: command('ok'), inputs: { ...inputs, init: 'campaigns/c/phase-1/checkpoints/actor' }, outputs, store: files }),
      /model\.onnx came back with 8 bytes/,
    );
  });

  test('an optional input the job lacks leaves its option out; one it has is staged', async () => {
    const files = store();
    await runExternalTrainer({ command: command('ok'), inputs, outputs, store: files });
    const template = `${command('ok')} --init {init} --critic={critic} --reference {reference} --last`;
    const optional = ['init', 'reference', 'critic'];
    const run = async (extra: Record<string, string>) => {
      const seen: string[] = [];
      await runExternalTrainer({ command: template, inputs: { ...inputs, ...extra }, optional, outputs, store: files, onLog: (line) => seen.push(line) });
      return seen;
    };
    assert.ok((await run({})).includes('options: --data --out --mode --last'));
    const withInit = await run({ init: 'campaigns/c/phase-1/checkpoints/actor' });
    assert.ok(withInit.includes('options: --data --out --mode --init --last') && withInit.includes('init files: model.onnx,tokenizer'), withInit.join('\n'));
    // Names that are not optional inputs still fail.
    await assert.rejects(
      runExternalTrainer({ command: `${template} {other}`, inputs, optional, outputs, store: store() }),
      /names \{other\}, which is neither an input nor an output/,
    );
  });

  test('with a work directory, a retry finds the failed attempt’s partial output; a success clears it', async () => {
    const workDir = join(await mkdtemp(join(tmpdir(), 'webrl-trainer-retry-')), 'job');
    const files = store();
    await assert.rejects(runExternalTrainer({ command: command('fail'), inputs, outputs, store: files, workDir }), ExternalTrainerError);
    assert.deepEqual(await readdir(join(workDir, 'out', 'out')), ['step-checkpoint']);
    const seen: string[] = [];
    await runExternalTrainer({ command: command('ok'), inputs, outputs, store: files, workDir, onLog: (line) => seen.push(line) });
    assert.ok(seen.includes('resuming from step-checkpoint'), seen.join('\n'));
    assert.equal(existsSync(workDir), false);
  });

  test('a crash is a retried failure with the last log lines; bad input (exit 2) is permanent', async () => {
    await assert.rejects(runExternalTrainer({ command: command('fail'), inputs, outputs, store: store() }), (error: unknown) => {
      assert.ok(error instanceof TrainerInterruptedError);
      assert.equal(error.exitCode, 1);
      assert.match(error.message, /exited with code 1; last lines:[\s\S]*CUDA out of memory/);
      assert.ok(!PERMANENT_ERROR_TYPES.includes(error.name), 'a crash is retried');
      return true;
    });
    await assert.rejects(runExternalTrainer({ command: command('bad-input'), inputs, outputs, store: store() }), (error: unknown) => {
      assert.ok(error instanceof ExternalTrainerError && !(error instanceof TrainerInterruptedError));
      assert.equal(error.exitCode, 2);
      assert.match(error.message, /exited with code 2; last lines:[\s\S]*line 2: prompt: expected a string/);
      assert.ok(PERMANENT_ERROR_TYPES.includes(error.name), 'bad input fails the activity at once');
      return true;
    });
  });

  test('a trainer past its time limit is killed; a cancelled one too', async () => {
    await assert.rejects(runExternalTrainer({ command: command('hang'), inputs, outputs, store: store(), timeoutMs: 300 }), /ran past its 300 ms limit/);
    const controller = new AbortController();
    await assert.rejects(
      runExternalTrainer({
        command: command('hang'),
        inputs,
        outputs,
        store: store(),
        signal: controller.signal,
        onLog: (line) => line.startsWith('loaded') && controller.abort(),
      }),
      /was cancelled/,
    );
  });

  test('a missing output, an unknown placeholder, a missing program, a missing input', async () => {
    await assert.rejects(runExternalTrainer({ command: command('no-output'), inputs, outputs, store: store() }), /exited 0 but did not write \{out\}/);
    await assert.rejects(
      runExternalTrainer({ command: `${command('ok')} --init {actor}`, inputs, outputs, store: store() }),
      /names \{actor\}, which is neither an input nor an output/,
    );
    await assert.rejects(
      runExternalTrainer({ command: '/nonexistent/python train.py {data}', inputs, outputs, store: store() }),
      /cannot start the trainer "\/nonexistent\/python"/,
    );
    await assert.rejects(
      runExternalTrainer({ command: command('ok'), inputs: { data: 'missing.jsonl' }, outputs, store: store() }),
      /no object missing\.jsonl/,
    );
  });

  test('command templates split like a shell would, without one', () => {
    assert.deepEqual(splitCommand(`python  "my train.py" --lr '1e-6' --x={data}`), ['python', 'my train.py', '--lr', '1e-6', '--x={data}']);
    assert.deepEqual(splitCommand(`a '' b`), ['a', '', 'b']);
    assert.throws(() => splitCommand(`python 'open`), /unclosed '/);
  });
  test('progress lines: the fraction, the steps when counted; the time left from the pace since the first report', () => {
    assert.deepEqual(parseProgressLine('PROGRESS 0.2500 3/12'), { fraction: 0.25, step: 3, totalSteps: 12 });
    assert.deepEqual(parseProgressLine('  progress 1.5 '), { fraction: 1 });
    assert.equal(parseProgressLine('PROGRESS soon'), undefined);
    assert.equal(parseProgressLine('step 3/12 loss=0.5'), undefined);
    let clock = 100_000;
    const timeLeft = timeLeftEstimator(() => clock);
    // Loading took 100 s before the first report (a resumed job at a quarter): that time is not counted.
    assert.equal(timeLeft(0.25), undefined);
    clock += 30_000;
    assert.equal(timeLeft(0.25), undefined, 'no step since the first report: no pace yet');
    clock += 30_000;
    assert.equal(timeLeft(0.5), 120, 'a quarter in 60 s: the half left takes 120 s');
    clock += 60_000;
    assert.equal(timeLeft(1), 0);
  });
});
