/**
 * The Temporal dev server (from the `temporal` CLI): a full single-process server with its web UI,
 * its state in a SQLite file, the project's namespace and search attributes registered at start.
 */
import { Connection } from '@temporalio/client';
import type { ChildProcess } from 'node:child_process';
import { CAMPAIGN_SEARCH_ATTRIBUTES } from '../temporal/searchAttributes';
import { httpOk, spawnService, waitUntil } from './processes';

/** The dev server's spelling of each search attribute type. */
const CLI_TYPE_NAMES: Record<string, string> = { KEYWORD: 'Keyword', INT: 'Int', DOUBLE: 'Double', TEXT: 'Text', BOOL: 'Bool' };

/** Custom search attributes of campaign workflows, registered on the dev server. */
export const SEARCH_ATTRIBUTES = Object.fromEntries(CAMPAIGN_SEARCH_ATTRIBUTES.map((key) => [key.name, CLI_TYPE_NAMES[key.type]!]));

export interface TemporalServerOptions {
  binary: string;
  ip: string;
  port: number;
  uiPort: number;
  dbFile: string;
  namespace: string;
  logFile: string;
  detached: boolean;
  /** Extra dynamic config (e.g. a lower continue-as-new suggestion in tests). */
  dynamicConfig?: Record<string, unknown>;
}

export function temporalServerArgs(options: TemporalServerOptions): string[] {
  const args = [
    'server',
    'start-dev',
    '--ip',
    options.ip,
    '--port',
    String(options.port),
    '--ui-port',
    String(options.uiPort),
    '--db-filename',
    options.dbFile,
    '--namespace',
    options.namespace,
    '--log-level',
    'warn',
  ];
  for (const [name, type] of Object.entries(SEARCH_ATTRIBUTES)) args.push('--search-attribute', `${name}=${type}`);
  for (const [key, value] of Object.entries(options.dynamicConfig ?? {})) {
    args.push('--dynamic-config-value', `${key}=${JSON.stringify(value)}`);
  }
  return args;
}

/** Ready means: the frontend answers and knows our namespace. */
export async function temporalReady(address: string, namespace: string): Promise<boolean> {
  let connection: Connection | undefined;
  try {
    connection = await Connection.connect({ address, connectTimeout: 1_000 });
    await connection.workflowService.describeNamespace({ namespace });
    return true;
  } catch {
    return false;
  } finally {
    await connection?.close().catch(() => undefined);
  }
}

export function temporalUiUrl(ip: string, uiPort: number): string {
  return `http://${ip}:${uiPort}`;
}

export async function startTemporalServer(options: TemporalServerOptions): Promise<ChildProcess> {
  const child = await spawnService({
    name: 'temporal',
    command: options.binary,
    args: temporalServerArgs(options),
    logFile: options.logFile,
    detached: options.detached,
  });
  const address = `${options.ip}:${options.port}`;
  await waitUntil(`Temporal dev server at ${address}`, () => temporalReady(address, options.namespace), {
    timeoutMs: 60_000,
    child,
    logFile: options.logFile,
  });
  await waitUntil(`Temporal web UI at ${temporalUiUrl(options.ip, options.uiPort)}`, () => httpOk(temporalUiUrl(options.ip, options.uiPort)), {
    timeoutMs: 30_000,
    child,
    logFile: options.logFile,
  });
  return child;
}
