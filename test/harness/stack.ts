/**
 * The real stack for a test file: a Temporal dev server (SQLite file in a temp dir) and MinIO on free
 * ports with random credentials, started from the provisioned binaries and removed afterwards.
 */
import { Client, Connection } from '@temporalio/client';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig } from '../../config/load';
import type { Config } from '../../config/campaignConfig';
import { Secret, type Secrets } from '../../config/secrets';
import { startMinio } from '../../infra/minioServer';
import { exited, freePort } from '../../infra/processes';
import { startTemporalServer, type TemporalServerOptions } from '../../infra/temporalServer';
import { ensureMinio, ensureTemporal } from '../../infra/tools';
import { ArtifactStore } from '../../storage/artifactStore';

export interface TestStack {
  dir: string;
  config: Config;
  secrets: Secrets;
  /** Environment for child processes (workers, CLI) pointing at this stack, secrets included. */
  env: NodeJS.ProcessEnv;
  /** The values a test must never find in histories, logs or traces. */
  secretValues: string[];
  store: ArtifactStore;
  temporalBinary: string;
  client(): Promise<Client>;
  /** SIGKILLs the Temporal server (no clean shutdown). */
  killTemporal(): Promise<void>;
  /** Starts the Temporal server again on the same SQLite file and port. */
  restartTemporal(): Promise<void>;
  stop(): Promise<void>;
}

export async function startTestStack(options: { dynamicConfig?: Record<string, unknown> } = {}): Promise<TestStack> {
  const [temporal, minio] = [await ensureTemporal(), await ensureMinio()];
  const dir = await mkdtemp(join(tmpdir(), 'webrl-test-'));
  const ip = '127.0.0.1';
  const ports = { temporal: await freePort(), ui: await freePort(), minio: await freePort(), console: await freePort() };
  const accessKeyId = `test-${randomBytes(6).toString('hex')}`;
  const secretAccessKey = randomBytes(24).toString('base64url');
  const credentials = { accessKeyId: new Secret(accessKeyId), secretAccessKey: new Secret(secretAccessKey) };
  const serverOptions: TemporalServerOptions = {
    binary: temporal.path,
    ip,
    port: ports.temporal,
    uiPort: ports.ui,
    dbFile: join(dir, 'temporal.db'),
    namespace: 'webrl',
    logFile: join(dir, 'temporal.log'),
    detached: false,
    ...(options.dynamicConfig ? { dynamicConfig: options.dynamicConfig } : {}),
  };
  const children: { temporal?: ChildProcess; minio?: ChildProcess } = {};
  const clients: Client[] = [];
  const killAll = () => {
    for (const child of Object.values(children)) child?.kill('SIGKILL');
  };
  process.once('exit', killAll);

  [children.temporal, children.minio] = await Promise.all([
    startTemporalServer(serverOptions),
    startMinio({
      binary: minio.path,
      ip,
      port: ports.minio,
      consolePort: ports.console,
      dataDir: join(dir, 'minio'),
      credentials,
      logFile: join(dir, 'minio.log'),
      detached: false,
    }),
  ]);
  const config = parseConfig({
    stack: { dataDir: dir, temporalPort: ports.temporal, temporalUiPort: ports.ui, minioPort: ports.minio, minioConsolePort: ports.console },
    s3: { bucket: 'webrl-test' },
  });
  const secrets: Secrets = { s3: credentials, temporal: {} };
  const store = new ArtifactStore(config.s3, credentials);
  await store.ensureBucket();

  return {
    dir,
    config,
    secrets,
    env: {
      TEMPORAL_ADDRESS: config.temporal.address,
      TEMPORAL_NAMESPACE: config.temporal.namespace,
      WEBRL_S3_ENDPOINT: config.s3.endpoint,
      WEBRL_S3_BUCKET: config.s3.bucket,
      AWS_ACCESS_KEY_ID: accessKeyId,
      AWS_SECRET_ACCESS_KEY: secretAccessKey,
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    },
    secretValues: [accessKeyId, secretAccessKey],
    store,
    temporalBinary: temporal.path,
    async client() {
      const connection = await Connection.connect({ address: config.temporal.address });
      const client = new Client({ connection, namespace: config.temporal.namespace });
      clients.push(client);
      return client;
    },
    async killTemporal() {
      const child = children.temporal!;
      child.kill('SIGKILL');
      await exited(child);
    },
    async restartTemporal() {
      children.temporal = await startTemporalServer(serverOptions);
    },
    async stop() {
      for (const client of clients) await client.connection.close().catch(() => undefined);
      store.destroy();
      for (const child of Object.values(children)) {
        if (!child) continue;
        child.kill('SIGTERM');
        await exited(child);
      }
      process.removeListener('exit', killAll);
      await rm(dir, { recursive: true, force: true });
    },
  };
}
