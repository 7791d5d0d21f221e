/**
 * MinIO, the local S3-compatible store: one server over a data directory, root credentials from the
 * caller (never from a file in the repository).
 */
import type { ChildProcess } from 'node:child_process';
import type { S3Credentials } from '../config/secrets';
import { httpOk, spawnService, waitUntil } from './processes';

export interface MinioServerOptions {
  binary: string;
  ip: string;
  port: number;
  consolePort: number;
  dataDir: string;
  credentials: S3Credentials;
  logFile: string;
  detached: boolean;
}

export function minioEndpoint(ip: string, port: number): string {
  return `http://${ip}:${port}`;
}

export function minioReady(endpoint: string): Promise<boolean> {
  return httpOk(`${endpoint}/minio/health/live`);
}

export async function startMinio(options: MinioServerOptions): Promise<ChildProcess> {
  const child = await spawnService({
    name: 'minio',
    command: options.binary,
    args: ['server', options.dataDir, '--address', `${options.ip}:${options.port}`, '--console-address', `${options.ip}:${options.consolePort}`, '--quiet'],
    env: {
      MINIO_ROOT_USER: options.credentials.accessKeyId.reveal(),
      MINIO_ROOT_PASSWORD: options.credentials.secretAccessKey.reveal(),
      // A closed network: no update checks or call-home.
      MINIO_UPDATE: 'off',
      MINIO_CALLHOME_ENABLE: 'off',
    },
    logFile: options.logFile,
    detached: options.detached,
  });
  const endpoint = minioEndpoint(options.ip, options.port);
  await waitUntil(`MinIO at ${endpoint}`, () => minioReady(endpoint), { timeoutMs: 60_000, child, logFile: options.logFile });
  return child;
}
