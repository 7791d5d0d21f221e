import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { ArtifactStore } from '../storage/artifactStore';
import { downloadCheckpoint, readCheckpointListing, uploadCheckpoint } from '../storage/checkpoints';
import { StorageNotFoundError, StoragePermanentError, StorageTransientError } from '../storage/errors';
import { campaignKey, manifestKey, phaseKey } from '../storage/keys';
import { Secret } from '../config/secrets';
import { freePort } from '../infra/processes';
import { startTestStack, type TestStack } from './harness/stack';
import { StoreTraceSink } from '../storage/storeTraceSink';

describe('artifact store on MinIO', () => {
  let stack: TestStack;
  let store: ArtifactStore;
  before(async () => {
    stack = await startTestStack();
    store = stack.store;
  });
  after(() => stack?.stop());

  test('keys follow campaigns/<id>/phase-<k>/... and refuse traversal', () => {
    assert.equal(phaseKey('shop', 2, 'traces', '0007', 't-1.jsonl'), 'campaigns/shop/phase-2/traces/0007/t-1.jsonl');
    assert.equal(campaignKey('shop', 'config.json'), 'campaigns/shop/config.json');
    assert.throws(() => phaseKey('shop', 1, '../other'), /invalid storage key segment/);
    assert.throws(() => phaseKey('shop', -1), /invalid phase/);
  });

  test('JSON put/get, exists, list', async () => {
    await store.putJson('campaigns/a/phase-0/x.json', { hello: 'world', n: 1 });
    await store.putJson('campaigns/a/phase-0/y.json', [1, 2, 3]);
    assert.deepEqual(await store.getJson('campaigns/a/phase-0/x.json'), { hello: 'world', n: 1 });
    assert.equal(await store.exists('campaigns/a/phase-0/x.json'), true);
    assert.equal(await store.exists('campaigns/a/phase-0/missing.json'), false);
    assert.equal(await store.tryGetJson('campaigns/a/phase-0/missing.json'), undefined);
    await assert.rejects(store.getJson('campaigns/a/phase-0/missing.json'), StorageNotFoundError);
    const keys = [];
    for await (const item of store.list('campaigns/a/')) keys.push(item.key);
    assert.deepEqual(keys.sort(), ['campaigns/a/phase-0/x.json', 'campaigns/a/phase-0/y.json']);
  });

  test('JSONL streams both ways, in order, without holding the rows', async () => {
    async function* rows() {
      for (let i = 0; i < 20_000; i++) yield { i, text: `row ${i}`, nested: { even: i % 2 === 0 } };
    }
    const info = await store.writeJsonl('campaigns/a/phase-1/rows.jsonl', rows(), { partSize: 5 * 1024 * 1024 });
    assert.equal(info.lines, 20_000);
    let expected = 0;
    for await (const row of store.readJsonl<{ i: number }>('campaigns/a/phase-1/rows.jsonl')) {
      assert.equal(row.i, expected++);
    }
    assert.equal(expected, 20_000);
    await store.putBytes('campaigns/a/phase-1/bad.jsonl', '{"ok":1}\nnot json\n');
    await assert.rejects(async () => {
      for await (const _ of store.readJsonl('campaigns/a/phase-1/bad.jsonl'));
    }, /bad\.jsonl line 2 is not valid JSON/);
  });

  test("a trace sink with an actions prefix stores WebRL's layout: traces/<id>.jsonl and actions/<id>.json with the score", async () => {
    const sink = new StoreTraceSink(store, 'campaigns/w/phase-1/traces/', 'campaigns/w/phase-1/actions/');
    const { key } = await sink.writeTrajectory('task/7', [
      { trace_id: 'task/7', index: 0, prompt: 'p', html: '<html>', response: 'exit(message="x")', target: 'p' },
    ]);
    const score = await sink.writeScore!('task/7', { trace_id: 'task/7', task_id: 7, score: 1, actions: ['exit(message="x")'] });
    assert.equal(key, 'campaigns/w/phase-1/traces/task_7.jsonl');
    assert.equal(score.key, 'campaigns/w/phase-1/actions/task_7.json');
    assert.equal((await store.getJson<{ score: number }>(score.key)).score, 1);
    assert.equal(new StoreTraceSink(store, 'campaigns/w/phase-2/traces/').writeScore, undefined);
  });

  test('multipart upload and download of a large file keep the checksum', async () => {
    const source = join(stack.dir, 'big.bin');
    const bytes = randomBytes(12 * 1024 * 1024 + 123);
    await writeFile(source, bytes);
    const expected = createHash('sha256').update(bytes).digest('hex');
    let progressCalls = 0;
    const up = await store.uploadFile('campaigns/a/phase-0/checkpoints/actor.onnx', source, {
      partSize: 5 * 1024 * 1024,
      onProgress: () => progressCalls++,
    });
    assert.equal(up.sha256, expected);
    assert.ok(progressCalls > 1);
    const down = await store.downloadFile('campaigns/a/phase-0/checkpoints/actor.onnx', join(stack.dir, 'copy.bin'));
    assert.equal(down.sha256, expected);
    assert.deepEqual(await readFile(join(stack.dir, 'copy.bin')), bytes);
    assert.equal((await store.checksum('campaigns/a/phase-0/checkpoints/actor.onnx')).sha256, expected);
  });

  test('a directory checkpoint of 50 files, one of 300 MB, round-trips with checksums', async () => {
    const source = await mkdtemp(join(tmpdir(), 'webrl-ckpt-src-'));
    const target = await mkdtemp(join(tmpdir(), 'webrl-ckpt-dst-'));
    try {
      await mkdir(join(source, 'nested', 'deeper'), { recursive: true });
      // The big file is generated and hashed in 1 MiB chunks, never held whole.
      const bigHash = createHash('sha256');
      const big = createWriteStream(join(source, 'adapter_model.safetensors'));
      for (let i = 0; i < 300; i++) {
        const chunk = randomBytes(1024 * 1024);
        bigHash.update(chunk);
        if (!big.write(chunk)) await once(big, 'drain');
      }
      big.end();
      await once(big, 'close');
      const expected = new Map([['adapter_model.safetensors', bigHash.digest('hex')]]);
      for (let i = 0; i < 49; i++) {
        const path = i < 10 ? `nested/deeper/part-${i}.json` : i < 25 ? `nested/file-${i}.txt` : `file-${i}.bin`;
        const body = randomBytes(100 + i * 37);
        await writeFile(join(source, ...path.split('/')), body);
        expected.set(path, createHash('sha256').update(body).digest('hex'));
      }
      const key = 'campaigns/a/phase-1/checkpoints/actor';
      const objects = await uploadCheckpoint(store, key, source);
      assert.equal(objects.length, 51, '50 files and the listing');
      const listing = await readCheckpointListing(store, key);
      assert.equal(listing?.files.length, 50);
      assert.deepEqual(new Map(listing!.files.map((file) => [file.path, file.sha256])), expected);

      const staged = await downloadCheckpoint(store, key, join(target, 'actor'));
      assert.equal(staged.kind, 'directory');
      for (const [path, sha256] of expected) {
        const hash = createHash('sha256');
        for await (const chunk of createReadStream(join(target, 'actor', ...path.split('/')))) hash.update(chunk);
        assert.equal(hash.digest('hex'), sha256, path);
      }

      // A file changed in storage behind the listing's back is refused by its checksum.
      await store.putBytes(`${key}/file-30.bin`, Buffer.alloc(100 + 30 * 37));
      await assert.rejects(downloadCheckpoint(store, key, join(target, 'again')), /file-30\.bin came back with .* the listing says/);
      // A single-file checkpoint still stages as a file.
      await store.putBytes('campaigns/a/phase-1/checkpoints/critic.onnx', 'weights');
      const single = await downloadCheckpoint(store, 'campaigns/a/phase-1/checkpoints/critic.onnx', join(target, 'critic.onnx'));
      assert.equal(single.kind, 'file');
      assert.equal(await readFile(join(target, 'critic.onnx'), 'utf8'), 'weights');
    } finally {
      await rm(source, { recursive: true, force: true });
      await rm(target, { recursive: true, force: true });
    }
  });

  test('a failing source aborts the upload and leaves no object or parts', async () => {
    const key = 'campaigns/a/phase-0/broken.bin';
    const source = new Readable({
      read() {
        this.destroy(new Error('disk went away'));
      },
    });
    await assert.rejects(store.uploadStream(key, source), /disk went away|MultipartUpload/);
    assert.equal(await store.exists(key), false);
    assert.equal(await store.abortStaleUploads(key), 0);
  });

  test('a manifest is published after its data, and only once', async () => {
    const data = await store.putJson('campaigns/a/phase-3/eval.json', { success: 0.4 });
    const first = await store.publishManifest(manifestKey('campaigns/a/phase-3/eval.json'), [data], { attempt: 1 });
    const second = await store.publishManifest(manifestKey('campaigns/a/phase-3/eval.json'), [data], { attempt: 2 });
    assert.deepEqual(second, first);
    assert.deepEqual((await store.readManifest(manifestKey('campaigns/a/phase-3/eval.json')))?.data, { attempt: 1 });
    await assert.rejects(
      store.publishManifest('campaigns/a/phase-3/orphan.manifest.json', [{ key: 'campaigns/a/phase-3/nothing', bytes: 1, sha256: '' }], {}),
      StorageNotFoundError,
    );
    assert.equal(await store.readManifest('campaigns/a/phase-3/orphan.manifest.json'), undefined);
  });

  test('wrong credentials fail at once, non-retryable, naming endpoint and bucket but not the secret', async () => {
    const wrongSecret = 'wrong-' + randomBytes(8).toString('hex');
    const wrong = new ArtifactStore(stack.config.s3, { accessKeyId: new Secret('nobody'), secretAccessKey: new Secret(wrongSecret) });
    const started = Date.now();
    const error = await wrong.putJson('campaigns/a/x.json', {}).then(
      () => assert.fail('write with wrong credentials succeeded'),
      (e: Error) => e,
    );
    wrong.destroy();
    assert.ok(error instanceof StoragePermanentError, `${error.name}: ${error.message}`);
    assert.ok(Date.now() - started < 5_000, 'took more than 5 s');
    assert.match(error.message, new RegExp(`S3 at ${stack.config.s3.endpoint}, bucket 'webrl-test' rejected the credentials`));
    assert.ok(!error.message.includes(wrongSecret));
  });

  test('a missing bucket is a permanent error', async () => {
    const missing = new ArtifactStore({ ...stack.config.s3, bucket: 'no-such-bucket' }, stack.secrets.s3);
    await assert.rejects(missing.putJson('k.json', {}), (e: Error) => e instanceof StoragePermanentError && /does not exist/.test(e.message));
    missing.destroy();
  });

  test('an unreachable endpoint is retried with backoff, then reported as transient', async () => {
    const port = await freePort();
    const down = new ArtifactStore({ ...stack.config.s3, endpoint: `http://127.0.0.1:${port}`, maxAttempts: 3 }, stack.secrets.s3);
    await assert.rejects(down.getJson('k.json'), (e: Error) => e instanceof StorageTransientError && /failed after retries/.test(e.message));
    down.destroy();
  });
});
