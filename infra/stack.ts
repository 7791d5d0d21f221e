/**
 * The local stack behind `webrl stack up|down|status`: the Temporal dev server (SQLite state, web UI,
 * namespace and search attributes) and MinIO (data dir, the project's bucket), started detached under
 * the data dir, reused when already running, and stopped only if this stack started them.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Config } from '../config/campaignConfig';
import { Secret, type S3Credentials } from '../config/secrets';
import { ArtifactStore } from '../storage/artifactStore';
import { minioEndpoint, minioReady, startMinio } from './minioServer';
import { assertPortsFree, commandLineOf, isAlive, StackError, stopProcess } from './processes';
import { startTemporalServer, temporalReady, temporalUiUrl } from './temporalServer';
import type { Log } from './tools';

interface ServiceRecord {
  pid: number;
  binary: string;
}

interface StackState {
  temporal?: ServiceRecord;
  minio?: ServiceRecord;
}

export interface StackEndpoints {
  temporalAddress: string;
  temporalUi: string;
  namespace: string;
  s3Endpoint: string;
  minioConsole: string;
  bucket: string;
}

export interface StackPaths {
  dataDir: string;
  stateFile: string;
  credentialsFile: string;
  temporalDb: string;
  minioData: string;
  logDir: string;
}

export function stackPaths(config: Config): StackPaths {
  const dataDir = resolve(config.stack.dataDir);
  return {
    dataDir,
    stateFile: join(dataDir, 'stack.json'),
    credentialsFile: join(dataDir, 'secrets', 'minio.json'),
    temporalDb: join(dataDir, 'temporal', 'temporal.db'),
    minioData: join(dataDir, 'minio'),
    logDir: join(dataDir, 'logs'),
  };
}

export function stackEndpoints(config: Config): StackEndpoints {
  const { ip } = config.stack;
  return {
    temporalAddress: `${ip}:${config.stack.temporalPort}`,
    temporalUi: temporalUiUrl(ip, config.stack.temporalUiPort),
    namespace: config.temporal.namespace,
    s3Endpoint: minioEndpoint(ip, config.stack.minioPort),
    minioConsole: `http://${ip}:${config.stack.minioConsolePort}`,
    bucket: config.s3.bucket,
  };
}

/** True when the config's S3 endpoint is this machine's local stack (so its credentials apply). */
export function targetsLocalStack(config: Config): boolean {
  const local = new URL(stackEndpoints(config).s3Endpoint);
  const target = new URL(config.s3.endpoint);
  const loopback = (host: string) => host === 'localhost' || host.startsWith('127.');
  return target.port === local.port && loopback(target.hostname) && loopback(local.hostname);
}

/** The local MinIO's root credentials, generated once per data dir and kept in a 0600 file. */
export async function localStackCredentials(config: Config, options: { create: boolean }): Promise<S3Credentials | undefined> {
  const { credentialsFile } = stackPaths(config);
  try {
    const stored = JSON.parse(await readFile(credentialsFile, 'utf8')) as { accessKeyId: string; secretAccessKey: string };
    return { accessKeyId: new Secret(stored.accessKeyId), secretAccessKey: new Secret(stored.secretAccessKey) };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || !options.create) return undefined;
  }
  const generated = { accessKeyId: `webrl-${randomBytes(6).toString('hex')}`, secretAccessKey: randomBytes(24).toString('base64url') };
  await mkdir(join(credentialsFile, '..'), { recursive: true, mode: 0o700 });
  await writeFile(credentialsFile, JSON.stringify(generated), { mode: 0o600 });
  return { accessKeyId: new Secret(generated.accessKeyId), secretAccessKey: new Secret(generated.secretAccessKey) };
}

async function readState(paths: StackPaths): Promise<StackState> {
  try {
    return JSON.parse(await readFile(paths.stateFile, 'utf8')) as StackState;
  } catch {
    return {};
  }
}

async function writeState(paths: StackPaths, state: StackState): Promise<void> {
  await mkdir(paths.dataDir, { recursive: true });
  await writeFile(paths.stateFile, `${JSON.stringify(state, null, 2)}\n`);
}

/** Ours and alive: the recorded pid runs the recorded binary (guards against pid reuse). */
function running(record: ServiceRecord | undefined): boolean {
  return Boolean(record && isAlive(record.pid) && commandLineOf(record.pid)?.startsWith(record.binary));
}

export interface StackUpOptions {
  temporalBinary: string;
  minioBinary: string;
  /** S3 credentials from the environment; when absent the stack generates and keeps its own. */
  s3Credentials?: S3Credentials;
  log: Log;
}

export async function stackUp(config: Config, options: StackUpOptions): Promise<StackEndpoints> {
  const paths = stackPaths(config);
  const endpoints = stackEndpoints(config);
  const state = await readState(paths);
  const { ip } = config.stack;

  if (running(state.temporal) && (await temporalReady(endpoints.temporalAddress, endpoints.namespace))) {
    options.log(`Temporal dev server already running (pid ${state.temporal!.pid}); reusing it`);
  } else {
    await assertPortsFree(ip, [
      { port: config.stack.temporalPort, what: 'Temporal gRPC', setting: '--temporal-port or stack.temporalPort' },
      { port: config.stack.temporalUiPort, what: 'Temporal web UI', setting: '--temporal-ui-port or stack.temporalUiPort' },
    ]);
    await mkdir(join(paths.temporalDb, '..'), { recursive: true });
    options.log(`starting Temporal dev server (state in ${paths.temporalDb})`);
    const child = await startTemporalServer({
      binary: options.temporalBinary,
      ip,
      port: config.stack.temporalPort,
      uiPort: config.stack.temporalUiPort,
      dbFile: paths.temporalDb,
      namespace: config.temporal.namespace,
      logFile: join(paths.logDir, 'temporal.log'),
      detached: true,
    });
    state.temporal = { pid: child.pid!, binary: options.temporalBinary };
    await writeState(paths, state);
  }

  const credentials = options.s3Credentials ?? (await localStackCredentials(config, { create: true }))!;
  if (running(state.minio) && (await minioReady(endpoints.s3Endpoint))) {
    options.log(`MinIO already running (pid ${state.minio!.pid}); reusing it`);
  } else {
    await assertPortsFree(ip, [
      { port: config.stack.minioPort, what: 'MinIO S3 API', setting: '--minio-port or stack.minioPort' },
      { port: config.stack.minioConsolePort, what: 'MinIO console', setting: '--minio-console-port or stack.minioConsolePort' },
    ]);
    await mkdir(paths.minioData, { recursive: true });
    options.log(`starting MinIO (data in ${paths.minioData})`);
    const child = await startMinio({
      binary: options.minioBinary,
      ip,
      port: config.stack.minioPort,
      consolePort: config.stack.minioConsolePort,
      dataDir: paths.minioData,
      credentials,
      logFile: join(paths.logDir, 'minio.log'),
      detached: true,
    });
    state.minio = { pid: child.pid!, binary: options.minioBinary };
    await writeState(paths, state);
  }

  const store = new ArtifactStore({ ...config.s3, endpoint: endpoints.s3Endpoint }, credentials);
  try {
    await store.ensureBucket();
  } finally {
    store.destroy();
  }
  return endpoints;
}

export async function stackDown(config: Config, log: Log): Promise<void> {
  const paths = stackPaths(config);
  const state = await readState(paths);
  for (const name of ['temporal', 'minio'] as const) {
    const record = state[name];
    if (record && running(record)) {
      log(`stopping ${name} (pid ${record.pid})`);
      await stopProcess(record.pid);
    } else if (record) {
      log(`${name} (pid ${record.pid}) is not running`);
    }
  }
  await rm(paths.stateFile, { force: true });
}

export interface ServiceStatus {
  name: string;
  pid?: number;
  running: boolean;
  ready: boolean;
  endpoint: string;
}

export async function stackStatus(config: Config): Promise<ServiceStatus[]> {
  const state = await readState(stackPaths(config));
  const endpoints = stackEndpoints(config);
  const temporalUp = running(state.temporal);
  const minioUp = running(state.minio);
  return [
    {
      name: 'temporal',
      ...(state.temporal ? { pid: state.temporal.pid } : {}),
      running: temporalUp,
      ready: temporalUp && (await temporalReady(endpoints.temporalAddress, endpoints.namespace)),
      endpoint: `${endpoints.temporalAddress} (UI ${endpoints.temporalUi})`,
    },
    {
      name: 'minio',
      ...(state.minio ? { pid: state.minio.pid } : {}),
      running: minioUp,
      ready: minioUp && (await minioReady(endpoints.s3Endpoint)),
      endpoint: `${endpoints.s3Endpoint} (console ${endpoints.minioConsole})`,
    },
  ];
}

export { StackError };
