import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, isAlive } from '../infra/processes';
import { runWebrl } from './harness/cli';

const webrl = (args: string[]) => runWebrl(args);

describe('webrl stack up | status | down', () => {
  let dataDir: string;
  let flags: string[];
  let ports: { temporal: number; ui: number; minio: number; console: number };

  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'webrl-stack-'));
    ports = { temporal: await freePort(), ui: await freePort(), minio: await freePort(), console: await freePort() };
    flags = [
      '--data-dir',
      dataDir,
      '--temporal-port',
      String(ports.temporal),
      '--temporal-ui-port',
      String(ports.ui),
      '--minio-port',
      String(ports.minio),
      '--minio-console-port',
      String(ports.console),
    ];
  });
  after(async () => {
    await webrl(['stack', 'down', ...flags]);
    await rm(dataDir, { recursive: true, force: true });
  });

  test('up starts the stack: the UI lists the namespace, MinIO is healthy, endpoints are printed', async () => {
    const up = await webrl(['stack', 'up', ...flags]);
    assert.equal(up.code, 0, up.output);
    assert.match(up.output, new RegExp(`Temporal gRPC\\s+127\\.0\\.0\\.1:${ports.temporal}`));
    assert.match(up.output, new RegExp(`Temporal UI\\s+http://127\\.0\\.0\\.1:${ports.ui}/namespaces/webrl/workflows`));
    assert.match(up.output, new RegExp(`S3 endpoint\\s+http://127\\.0\\.0\\.1:${ports.minio}`));
    assert.match(up.output, new RegExp(`MinIO console\\s+http://127\\.0\\.0\\.1:${ports.console}`));

    const ui = await fetch(`http://127.0.0.1:${ports.ui}/`);
    assert.equal(ui.status, 200);
    const namespaces = (await (await fetch(`http://127.0.0.1:${ports.ui}/api/v1/namespaces`)).json()) as {
      namespaces: Array<{ namespaceInfo: { name: string } }>;
    };
    assert.ok(namespaces.namespaces.some((n) => n.namespaceInfo.name === 'webrl'));
    assert.equal((await fetch(`http://127.0.0.1:${ports.minio}/minio/health/live`)).status, 200);

    const status = await webrl(['stack', 'status', ...flags]);
    assert.match(status.output, /temporal\s+ready/);
    assert.match(status.output, /minio\s+ready/);
    const credentials = await readFile(join(dataDir, 'secrets', 'minio.json'), 'utf8');
    const { secretAccessKey } = JSON.parse(credentials) as { secretAccessKey: string };
    assert.ok(!up.output.includes(secretAccessKey) && !status.output.includes(secretAccessKey));
  });

  test('up again reuses the running servers', async () => {
    const again = await webrl(['stack', 'up', ...flags]);
    assert.equal(again.code, 0, again.output);
    assert.match(again.output, /Temporal dev server already running \(pid \d+\); reusing it/);
    assert.match(again.output, /MinIO already running \(pid \d+\); reusing it/);
  });

  test('a port held by another process is a clear error', async () => {
    const otherDir = await mkdtemp(join(tmpdir(), 'webrl-stack-other-'));
    const clash = await webrl(['stack', 'up', ...flags.map((f) => (f === dataDir ? otherDir : f))]);
    await rm(otherDir, { recursive: true, force: true });
    assert.notEqual(clash.code, 0);
    assert.match(
      clash.output,
      new RegExp(
        `webrl: port ${ports.temporal} on 127\\.0\\.0\\.1 \\(Temporal gRPC\\) is held by another process; stop it or choose another port with --temporal-port`,
      ),
    );
  });

  test('down stops every process the stack started', async () => {
    const state = JSON.parse(await readFile(join(dataDir, 'stack.json'), 'utf8')) as Record<string, { pid: number }>;
    const pids = Object.values(state).map((s) => s.pid);
    assert.equal(pids.length, 2);
    const down = await webrl(['stack', 'down', ...flags]);
    assert.equal(down.code, 0, down.output);
    for (const pid of pids) assert.equal(isAlive(pid), false, `pid ${pid} still running`);
    const status = await webrl(['stack', 'status', ...flags]);
    assert.match(status.output, /temporal\s+stopped/);
    assert.match(status.output, /minio\s+stopped/);
  });
});
