/**
 * Sends the Temporal SDK's logs (its own, core's and what activities and workflows log) to a file, for
 * a process whose terminal shows something else: the main job's progress view. Installs the process's
 * Temporal runtime, so it must run before the first connection or worker is made.
 */
import { DefaultLogger, Runtime, type LogEntry } from '@temporalio/worker';
import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

function formatEntry(entry: LogEntry): string {
  const at = new Date(Number(entry.timestampNanos / 1_000_000n)).toISOString();
  const meta =
    entry.meta && Object.keys(entry.meta).length
      ? ` ${JSON.stringify(entry.meta, (_key, value: unknown) => (typeof value === 'bigint' ? String(value) : value))}`
      : '';
  return `${at} [${entry.level}] ${entry.message}${meta}\n`;
}

/**
 * Installs a runtime that appends every SDK log line (INFO and up) to `path`. No signal handlers:
 * the caller decides what Ctrl-C means (the SDK's default shuts workers down with a warning per
 * activity in flight, which is noise for a user who only stopped watching).
 */
export function installSdkLogFile(path: string): void {
  mkdirSync(dirname(path), { recursive: true });
  // Synchronous appends keep lines whole and in order; the SDK logs a few lines a second at most.
  const write = (entry: LogEntry) => appendFileSync(path, formatEntry(entry));
  Runtime.install({
    logger: new DefaultLogger('INFO', write),
    telemetryOptions: { logging: { filter: { core: 'WARN', other: 'ERROR' }, forward: {} } },
    shutdownSignals: [],
  });
}
