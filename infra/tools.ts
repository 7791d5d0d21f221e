/**
 * Finds or installs the three real components: the `temporal` CLI (which embeds the dev server and its
 * web UI), `minio`, and Chromium. Lookup order for each: an explicit environment variable, PATH, the Go
 * bin directory, then an install from a package registry (`go install` of a pinned version, or
 * Debian's `chromium` when running as root). Idempotent: a second call finds what the first installed.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { access, constants } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export type Log = (message: string) => void;

/** Pinned versions: the last Temporal CLI tag `go install` accepts, and the MinIO commit resolved once. */
export const TEMPORAL_CLI_MODULE = 'github.com/temporalio/cli/cmd/temporal@v1.5.1';
export const MINIO_MODULE = 'github.com/minio/minio@v0.0.0-20260212201848-7aac2a2c5b7c';

export class ToolNotAvailableError extends Error {
  override name = 'ToolNotAvailableError';
}

export interface ResolvedTool {
  name: string;
  path: string;
  version: string;
  /** How it was obtained: env, path, gobin, datadir (an environment made earlier), installed. */
  source: 'env' | 'path' | 'gobin' | 'datadir' | 'installed';
}

async function isExecutable(path: string): Promise<boolean> {
  try {
    await access(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

async function findOnPath(names: string[]): Promise<string | undefined> {
  const dirs = (process.env.PATH ?? '').split(delimiter).filter(Boolean);
  for (const name of names) {
    for (const dir of dirs) {
      const candidate = join(dir, name);
      if (await isExecutable(candidate)) return candidate;
    }
  }
  return undefined;
}

/** `go` on PATH, else in $GOROOT (default: the official installer's /usr/local/go, often not on PATH). */
async function findGo(): Promise<string | undefined> {
  const fromRoot = join(process.env.GOROOT ?? '/usr/local/go', 'bin', 'go');
  return (await findOnPath(['go'])) ?? ((await isExecutable(fromRoot)) ? fromRoot : undefined);
}

async function goBinDir(): Promise<string | undefined> {
  const go = await findGo();
  if (!go) {
    const fallback = process.env.GOBIN ?? join(process.env.GOPATH ?? join(process.env.HOME ?? '/root', 'go'), 'bin');
    return fallback;
  }
  const { stdout } = await run(go, ['env', 'GOBIN', 'GOPATH']);
  const [gobin, gopath] = stdout.split('\n');
  if (gobin?.trim()) return gobin.trim();
  return join((gopath ?? '').split(delimiter)[0]!.trim(), 'bin');
}

async function versionOf(path: string, args: string[]): Promise<string> {
  try {
    const { stdout } = await run(path, args, { timeout: 30_000 });
    return stdout.split('\n')[0]!.trim();
  } catch (error) {
    throw new ToolNotAvailableError(`${path} is not runnable: ${(error as Error).message}`);
  }
}

/** Streams a long install's output with a prefix, so the user sees progress instead of silence. */
export async function runLoud(command: string, args: string[], log: Log, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  log(`running: ${command} ${args.join(' ')}`);
  await new Promise<void>((resolve, reject) => {
    const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const relay = (chunk: Buffer) => {
      for (const line of chunk.toString().split('\n')) if (line.trim()) log(`  ${line}`);
    };
    child.stdout.on('data', relay);
    child.stderr.on('data', relay);
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new ToolNotAvailableError(`${command} ${args.join(' ')} exited with ${code}`))));
  });
}

interface GoToolSpec {
  name: string;
  envVar: string;
  module: string;
  versionArgs: string[];
  /** Rough build time on 2 cores, told to the user before a build starts. */
  buildHint: string;
}

async function ensureGoTool(spec: GoToolSpec, log: Log): Promise<ResolvedTool> {
  const fromEnv = process.env[spec.envVar];
  if (fromEnv) {
    if (!(await isExecutable(fromEnv))) {
      throw new ToolNotAvailableError(`${spec.envVar}=${fromEnv} is not an executable file`);
    }
    return { name: spec.name, path: fromEnv, version: await versionOf(fromEnv, spec.versionArgs), source: 'env' };
  }
  const onPath = await findOnPath([spec.name]);
  if (onPath) return { name: spec.name, path: onPath, version: await versionOf(onPath, spec.versionArgs), source: 'path' };
  const binDir = await goBinDir();
  if (binDir && (await isExecutable(join(binDir, spec.name)))) {
    const path = join(binDir, spec.name);
    return { name: spec.name, path, version: await versionOf(path, spec.versionArgs), source: 'gobin' };
  }
  const go = await findGo();
  if (!go) {
    throw new ToolNotAvailableError(
      `${spec.name} was not found (looked at $${spec.envVar}, PATH and the Go bin directory) and there is no ` +
        `Go toolchain to build it with. Install Go (https://go.dev/dl/) or put ${spec.name} on PATH.`,
    );
  }
  log(`${spec.name} not found; building ${spec.module} with go install (${spec.buildHint}, cached afterwards)`);
  await runLoud(go, ['install', spec.module], log);
  const path = join(binDir!, spec.name);
  if (!(await isExecutable(path))) throw new ToolNotAvailableError(`go install finished but ${path} is missing`);
  return { name: spec.name, path, version: await versionOf(path, spec.versionArgs), source: 'installed' };
}

export function ensureTemporal(log: Log = () => {}): Promise<ResolvedTool> {
  return ensureGoTool(
    {
      name: 'temporal',
      envVar: 'WEBRL_TEMPORAL_BIN',
      module: TEMPORAL_CLI_MODULE,
      versionArgs: ['--version'],
      buildHint: 'several minutes',
    },
    log,
  );
}

export function ensureMinio(log: Log = () => {}): Promise<ResolvedTool> {
  return ensureGoTool(
    {
      name: 'minio',
      envVar: 'WEBRL_MINIO_BIN',
      module: MINIO_MODULE,
      versionArgs: ['--version'],
      buildHint: 'several minutes',
    },
    log,
  );
}

const CHROMIUM_NAMES = ['chromium', 'chromium-browser', 'google-chrome-stable', 'google-chrome'];

/** How long an apt-get waits for another's lock before it gives up. */
const APT_LOCK_WAIT_SECONDS = 900;

/**
 * apt-get that waits for the locks another apt-get holds instead of failing at once with exit 100: two
 * provisioning `webrl` processes (the main job and a benchmark) take turns on a lock file of their own
 * (apt's own list lock does not wait: `update` ignores DPkg::Lock::Timeout), and dpkg's lock, held by
 * anything else that installs packages, is waited for by apt itself.
 */
export async function runApt(
  aptGet: string,
  args: string[],
  log: Log,
  lockFile = join(existsSync('/run/lock') ? '/run/lock' : tmpdir(), 'webrl-apt.lock'),
): Promise<void> {
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const apt = [aptGet, '-o', `DPkg::Lock::Timeout=${APT_LOCK_WAIT_SECONDS}`, ...args];
  const flock = await findOnPath(['flock']);
  if (flock) await runLoud(flock, ['-w', String(APT_LOCK_WAIT_SECONDS), lockFile, ...apt], log, env);
  else await runLoud(apt[0]!, apt.slice(1), log, env);
}

export async function ensureChromium(log: Log = () => {}): Promise<ResolvedTool> {
  const fromEnv = process.env.WEBRL_CHROMIUM_BIN;
  if (fromEnv) {
    if (!(await isExecutable(fromEnv))) {
      throw new ToolNotAvailableError(`WEBRL_CHROMIUM_BIN=${fromEnv} is not an executable file`);
    }
    return { name: 'chromium', path: fromEnv, version: await versionOf(fromEnv, ['--version']), source: 'env' };
  }
  const onPath = await findOnPath(CHROMIUM_NAMES);
  if (onPath) return { name: 'chromium', path: onPath, version: await versionOf(onPath, ['--version']), source: 'path' };
  const aptGet = await findOnPath(['apt-get']);
  if (process.getuid?.() !== 0 || !aptGet) {
    throw new ToolNotAvailableError(
      'Chromium was not found (looked at $WEBRL_CHROMIUM_BIN and PATH for ' +
        `${CHROMIUM_NAMES.join(', ')}). Install it (Debian/Ubuntu: apt-get install chromium) ` +
        'or set WEBRL_CHROMIUM_BIN to its executable.',
    );
  }
  log("Chromium not found; installing Debian's chromium package with apt-get");
  await runApt(aptGet, ['update', '-qq'], log);
  await runApt(aptGet, ['install', '-y', '-qq', 'chromium'], log);
  const path = await findOnPath(CHROMIUM_NAMES);
  if (!path) throw new ToolNotAvailableError('apt-get installed chromium but no chromium executable is on PATH');
  return { name: 'chromium', path, version: await versionOf(path, ['--version']), source: 'installed' };
}

/** Flags that keep a headless Chromium quiet on a closed network (no background connections). */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface Toolset {
  temporal: ResolvedTool;
  minio: ResolvedTool;
  chromium: ResolvedTool;
}

/** Resolves all three tools, one after the other (builds would fight for the same two cores). */
export async function ensureTools(log: Log = () => {}): Promise<Toolset> {
  const temporal = await ensureTemporal(log);
  const minio = await ensureMinio(log);
  const chromium = await ensureChromium(log);
  return { temporal, minio, chromium };
}

export function describeTool(tool: ResolvedTool): string {
  const how = { env: 'from environment', path: 'found on PATH', gobin: 'found in Go bin', datadir: 'found in data dir', installed: 'installed now' }[
    tool.source
  ];
  return `${tool.name.padEnd(9)} ${how.padEnd(17)} ${tool.path}  (${tool.version})`;
}
