import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { setTimeout as delay } from 'node:timers/promises';
import { ListObjectVersionsCommand, ListPartsCommand, ListMultipartUploadsCommand, PutBucketVersioningCommand } from '@aws-sdk/client-s3';
import { WorkflowFailedError, type Client } from '@temporalio/client';
import type { Worker } from '@temporalio/worker';
import { createArtifactActivities } from '../activities/artifactTransfer';
import { Secret } from '../config/secrets';
import { ArtifactStore } from '../storage/artifactStore';
import { manifestKey } from '../storage/keys';
import { connectWorker } from '../temporal/connection';
import { createWorker } from '../workers/factory';
import { WORKFLOWS_PATH } from '../workers/run';
import { startTestStack, type TestStack } from './harness/stack';

const run = promisify(execFile);
const MB = 1024 * 1024;
const FIXTURE_WORKFLOWS = fileURLToPath(new URL('./fixtures/workflows/index.ts', import.meta.url));
const WORKER_ENTRY = fileURLToPath(new URL('../workers/control.ts', import.meta.url));

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    await delay(100);
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** The worker as a separate OS process, so the test can SIGKILL it like a crashed host. */
async function spawnWorker(stack: TestStack): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', WORKER_ENTRY], {
    env: { ...process.env, ...stack.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk));
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk;
      if (output.includes('worker polling')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`worker exited with ${code} before polling:\n${output}`)));
  });
  return child;
}

async function historyJson(stack: TestStack, workflowId: string): Promise<string> {
  const { stdout } = await run(
    stack.temporalBinary,
    [
      'workflow',
      'show',
      '--workflow-id',
      workflowId,
      '--output',
      'json',
      '--address',
      stack.config.temporal.address,
      '--namespace',
      stack.config.temporal.namespace,
    ],
    { maxBuffer: 64 * MB },
  );
  return stdout;
}

async function activityAttempts(stack: TestStack, workflowId: string, activityType: string): Promise<number[]> {
  interface HistoryEvent {
    eventId: string;
    activityTaskScheduledEventAttributes?: { activityType: { name: string } };
    activityTaskStartedEventAttributes?: { scheduledEventId: string; attempt: number };
  }
  const history = JSON.parse(await historyJson(stack, workflowId)) as { events: HistoryEvent[] };
  const scheduled = new Map<string, string>();
  const attempts: number[] = [];
  for (const event of history.events) {
    const attrs = event.activityTaskScheduledEventAttributes;
    if (attrs) scheduled.set(String(event.eventId), attrs.activityType.name);
    const started = event.activityTaskStartedEventAttributes;
    if (started && scheduled.get(String(started.scheduledEventId)) === activityType) attempts.push(Number(started.attempt));
  }
  return attempts;
}

describe('Temporal plumbing on the real dev server and MinIO', () => {
  let stack: TestStack;
  let client: Client;
  const workflowIds: string[] = [];

  before(async () => {
    stack = await startTestStack();
    client = await stack.client();
    // Versioning lets the test count how many times each object was written.
    await stack.store.client.send(new PutBucketVersioningCommand({ Bucket: stack.config.s3.bucket, VersioningConfiguration: { Status: 'Enabled' } }));
  });
  after(() => stack?.stop());

  test('a workflow streams 64 MB to MinIO by multipart upload and reads it back with an equal checksum', async () => {
    const connection = await connectWorker(stack.config, stack.secrets);
    const worker = await createWorker({
      connection,
      config: stack.config,
      taskQueue: 'roundtrip',
      workflowsPath: WORKFLOWS_PATH,
      activities: createArtifactActivities({ store: stack.store }),
    });
    try {
      const result = await worker.runUntil(
        client.workflow.execute('artifactRoundTrip', {
          workflowId: 'roundtrip-64mb',
          taskQueue: 'roundtrip',
          args: [{ key: 'checks/roundtrip-64mb.bin', bytes: 64 * MB, seed: 42 }],
        }),
      );
      workflowIds.push('roundtrip-64mb');
      const { uploaded, readBack } = result as { uploaded: { bytes: number; sha256: string }; readBack: { sha256: string } };
      assert.equal(uploaded.bytes, 64 * MB);
      assert.equal(readBack.sha256, uploaded.sha256);
      assert.equal((await stack.store.checksum('checks/roundtrip-64mb.bin')).sha256, uploaded.sha256);
    } finally {
      await connection.close();
    }
  });

  test('a worker SIGKILLed mid-upload is replaced and the object is published exactly once', async () => {
    const key = 'checks/killed-worker.bin';
    const first = await spawnWorker(stack);
    const handle = await client.workflow.start('artifactRoundTrip', {
      workflowId: 'roundtrip-killed-worker',
      taskQueue: stack.config.temporal.taskQueues.control,
      // Throttled so that "midway" lasts long enough to be observed.
      args: [{ key, bytes: 64 * MB, seed: 7, throttleBytesPerSecond: 16 * MB }],
    });
    workflowIds.push(handle.workflowId);
    const s3 = stack.store.client;
    const bucket = stack.config.s3.bucket;
    // Midway: a multipart upload of the key exists and holds at least one part.
    await waitFor('a part of the upload', async () => {
      const uploads = await s3.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: key }));
      const upload = uploads.Uploads?.find((u) => u.Key === key);
      if (!upload) return undefined;
      const parts = await s3.send(new ListPartsCommand({ Bucket: bucket, Key: key, UploadId: upload.UploadId }));
      return (parts.Parts?.length ?? 0) > 0 ? true : undefined;
    });
    first.kill('SIGKILL');
    await once(first, 'exit');
    assert.equal(await stack.store.exists(key), false, 'the object must not exist before the upload completes');

    const second = await spawnWorker(stack);
    try {
      const result = (await handle.result()) as { uploaded: { sha256: string; bytes: number }; readBack: { sha256: string } };
      assert.equal(result.readBack.sha256, result.uploaded.sha256);
      assert.equal(result.uploaded.bytes, 64 * MB);
    } finally {
      second.kill('SIGTERM');
      await once(second, 'exit');
    }
    const versions = await s3.send(new ListObjectVersionsCommand({ Bucket: bucket, Prefix: key }));
    const count = (k: string) => (versions.Versions ?? []).filter((v) => v.Key === k).length;
    assert.equal(count(key), 1, 'data object written once');
    assert.equal(count(manifestKey(key)), 1, 'manifest written once');
    const leftovers = await s3.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: key }));
    assert.equal(leftovers.Uploads?.length ?? 0, 0, 'no orphaned multipart upload');
    const attempts = await activityAttempts(stack, handle.workflowId, 'uploadGeneratedArtifact');
    assert.ok(attempts.length === 1 && attempts[0]! >= 2, `upload ran again after the kill: attempts ${attempts}`);
  });

  test('a workflow waiting on a signal survives a SIGKILL of the server and completes after restart', async () => {
    const connection = await connectWorker(stack.config, stack.secrets);
    let worker: Worker | undefined;
    try {
      worker = await createWorker({ connection, config: stack.config, taskQueue: 'signals', workflowsPath: FIXTURE_WORKFLOWS });
      const running = worker.run();
      const handle = await client.workflow.start('waitForFinishSignal', { workflowId: 'survives-server-kill', taskQueue: 'signals' });
      workflowIds.push(handle.workflowId);
      // The workflow has run its first task (handler installed, waiting) before the server dies.
      await waitFor('the first workflow task', async () => {
        const history = await handle.fetchHistory();
        return history.events?.some((e) => e.workflowTaskCompletedEventAttributes) ? true : undefined;
      });
      await stack.killTemporal();
      await stack.restartTemporal();
      await waitFor('the signal to be accepted', async () => {
        await handle.signal('finish', 'after restart');
        return true;
      });
      assert.equal(await handle.result(), 'after restart');
      worker.shutdown();
      await running;
    } finally {
      await connection.close();
    }
  });

  test('wrong S3 credentials fail the workflow non-retryably within seconds, naming endpoint and bucket', async () => {
    const wrongSecret = `wrong-${Date.now()}`;
    const wrongStore = new ArtifactStore(stack.config.s3, { accessKeyId: new Secret('nobody'), secretAccessKey: new Secret(wrongSecret) });
    const connection = await connectWorker(stack.config, stack.secrets);
    try {
      const worker = await createWorker({
        connection,
        config: stack.config,
        taskQueue: 'wrong-credentials',
        workflowsPath: WORKFLOWS_PATH,
        activities: createArtifactActivities({ store: wrongStore }),
      });
      const started = Date.now();
      const error = await worker
        .runUntil(
          client.workflow.execute('artifactRoundTrip', {
            workflowId: 'wrong-credentials',
            taskQueue: 'wrong-credentials',
            args: [{ key: 'checks/never.bin', bytes: MB, seed: 1 }],
          }),
        )
        .then(
          () => assert.fail('workflow succeeded with wrong credentials'),
          (e: unknown) => e,
        );
      workflowIds.push('wrong-credentials');
      assert.ok(error instanceof WorkflowFailedError);
      const cause = (error.cause as { cause?: { type?: string; message?: string } }).cause;
      assert.equal(cause?.type, 'StoragePermanentError');
      assert.match(cause?.message ?? '', new RegExp(`S3 at ${stack.config.s3.endpoint}, bucket '${stack.config.s3.bucket}'`));
      assert.ok(Date.now() - started < 15_000, `took ${Date.now() - started} ms`);
      assert.deepEqual(await activityAttempts(stack, 'wrong-credentials', 'uploadGeneratedArtifact'), [1]);
    } finally {
      await connection.close();
      wrongStore.destroy();
    }
  });

  test('no history contains a secret value', async () => {
    assert.ok(workflowIds.length >= 4);
    for (const id of workflowIds) {
      const history = await historyJson(stack, id);
      assert.ok(history.includes('"events"'), `history of ${id} printed`);
      for (const secret of stack.secretValues) assert.ok(!history.includes(secret), `${id} history contains a secret`);
    }
  });
});
