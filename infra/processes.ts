/**
 * Starting, watching and stopping the stack's server processes, and the port checks around them.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, closeSync, readFileSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { dirname } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';

export class StackError extends Error {
  override name = 'StackError';
}

export interface ServiceSpec {
  name: string;
  command: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
  logFile: string;
  /** Detached services outlive this process (`webrl stack up`); others die with their owner. */
  detached: boolean;
}

export async function spawnService(spec: ServiceSpec): Promise<ChildProcess> {
  await mkdir(dirname(spec.logFile), { recursive: true });
  const log = openSync(spec.logFile, 'a');
  try {
    const child = spawn(spec.command, spec.args, {
      env: { ...process.env, ...spec.env },
      stdio: ['ignore', log, log],
      detached: spec.detached,
    });
    if (spec.detached) child.unref();
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', (error) => reject(new StackError(`${spec.name}: cannot start ${spec.command}: ${error.message}`)));
    });
    return child;
  } finally {
    closeSync(log);
  }
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The command line of a live process (Linux /proc), to tell our server from a reused pid. */
export function commandLineOf(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
  } catch {
    return undefined;
  }
}

/** SIGTERM, then SIGKILL after the grace period; resolves once the process is gone. */
export async function stopProcess(pid: number, graceMs = 10_000): Promise<void> {
  if (!isAlive(pid)) return;
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return;
  }
  const deadline = Date.now() + graceMs;
  while (isAlive(pid) && Date.now() < deadline) await delay(50);
  if (isAlive(pid)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      return;
    }
    while (isAlive(pid)) await delay(20);
  }
}

/** Resolves when the child has exited (immediately if it already has). */
export function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

export async function tailOf(file: string, lines = 15): Promise<string> {
  try {
    return (await readFile(file, 'utf8')).trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/**
 * Polls `check` until it returns true. Fails early, with the log's tail, if `child` exits first,
 * and with a timeout error naming `what` otherwise.
 */
export async function waitUntil(
  what: string,
  check: () => Promise<boolean>,
  options: { timeoutMs: number; child?: ChildProcess; pid?: number; logFile?: string },
): Promise<void> {
  const deadline = Date.now() + options.timeoutMs;
  let interval = 50;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    const gone =
      (options.child && (options.child.exitCode !== null || options.child.signalCode !== null)) || (options.pid !== undefined && !isAlive(options.pid));
    if (gone) {
      const log = options.logFile ? `\n--- ${options.logFile} ---\n${await tailOf(options.logFile)}` : '';
      throw new StackError(`${what}: the process exited before becoming ready${log}`);
    }
    await delay(interval);
    interval = Math.min(interval * 2, 500);
  }
  const log = options.logFile ? `\n--- ${options.logFile} ---\n${await tailOf(options.logFile)}` : '';
  throw new StackError(`${what}: not ready after ${Math.round(options.timeoutMs / 1000)} s${log}`);
}

export function portIsFree(ip: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen({ host: ip, port, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** Where the OS hands out ports for outgoing connections; Linux says, elsewhere IANA's dynamic range. */
function ephemeralPortRange(): { low: number; high: number } {
  try {
    const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (Number.isInteger(low) && Number.isInteger(high)) return { low: low!, high: high! };
  } catch {
    // Not Linux.
  }
  return { low: 49152, high: 65535 };
}

/** Ports below the ephemeral range (above it where that is too narrow), as [from, to). */
function unclaimedPortRange(): [number, number] {
  const { low, high } = ephemeralPortRange();
  return low - 10_000 >= 1000 ? [10_000, low] : [high + 1, 65_536];
}

function osAssignedPort(ip: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen({ host: ip, port: 0 }, () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

const portsHandedOut = new Set<number>();

/**
 * A port that is free now and that the OS will not give to an outgoing connection later (tests and
 * benches; a small race with other processes is accepted). A port the OS picks itself comes from the
 * ephemeral range, where any client socket may take it before the service that was promised it
 * starts (embedded sites start at a worker's first rollout, a restarted Temporal server on its old port).
 */
export async function freePort(ip = '127.0.0.1'): Promise<number> {
  const [from, to] = unclaimedPortRange();
  if (to - from < 1000) return osAssignedPort(ip);
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = from + Math.floor(Math.random() * (to - from));
    // Ports handed out earlier may not be bound yet, so the OS cannot tell.
    if (portsHandedOut.has(port)) continue;
    portsHandedOut.add(port);
    if (await portIsFree(ip, port)) return port;
    portsHandedOut.delete(port);
  }
  throw new StackError(`no free port on ${ip} between ${from} and ${to - 1}`);
}

export async function assertPortsFree(ip: string, ports: Array<{ port: number; what: string; setting: string }>): Promise<void> {
  for (const { port, what, setting } of ports) {
    if (!(await portIsFree(ip, port))) {
      throw new StackError(`port ${port} on ${ip} (${what}) is held by another process; stop it or choose another port with ${setting}`);
    }
  }
}

export async function httpOk(url: string, timeoutMs = 2_000): Promise<boolean> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    await response.arrayBuffer();
    return response.ok;
  } catch {
    return false;
  }
}
