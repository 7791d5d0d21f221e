/** Runs the `webrl` CLI as a user would, in a child process; a non-zero exit is returned, not thrown. */
import { execFile, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Command } from 'commander';

const execFileAsync = promisify(execFile);
const WEBRL = fileURLToPath(new URL('../../bin/webrl.js', import.meta.url));

export interface CliOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
}

/** Exit code and stdout + stderr together. */
export async function runWebrl(args: string[], options: CliOptions = {}): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await execFileAsync(process.execPath, [WEBRL, ...args], {
      ...(options.cwd ? { cwd: options.cwd } : {}),
      ...(options.env ? { env: options.env } : {}),
      timeout: options.timeoutMs ?? 120_000,
      maxBuffer: 64 * 1024 * 1024,
    });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? 1, output: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
  }
}

/** A `webrl` command running in the background, for tests that act on it while it runs. */
export interface RunningWebrl {
  /** Everything printed so far, stdout and stderr together. */
  output(): string;
  /** Resolves once the output matches `pattern`; rejects if the command exits first or time runs out. */
  waitFor(pattern: RegExp, timeoutMs: number): Promise<void>;
  signal(name: NodeJS.Signals): void;
  exited: Promise<{ code: number | null; output: string }>;
}

export function startWebrl(args: string[], options: CliOptions = {}): RunningWebrl {
  const child = spawn(process.execPath, [WEBRL, ...args], {
    ...(options.cwd ? { cwd: options.cwd } : {}),
    ...(options.env ? { env: options.env } : {}),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const listeners = new Set<() => void>();
  const append = (chunk: Buffer) => {
    output += chunk.toString();
    for (const listener of listeners) listener();
  };
  child.stdout.on('data', append);
  child.stderr.on('data', append);
  const exited = new Promise<{ code: number | null; output: string }>((resolve) =>
    child.once('close', (code) => {
      for (const listener of listeners) listener();
      resolve({ code, output });
    }),
  );
  return {
    output: () => output,
    waitFor(pattern, timeoutMs) {
      return new Promise((resolve, reject) => {
        const done = (error?: Error) => {
          listeners.delete(check);
          clearTimeout(timer);
          if (error) reject(error);
          else resolve();
        };
        const check = () => {
          if (pattern.test(output)) done();
          else if (child.exitCode !== null || child.signalCode !== null) done(new Error(`webrl exited before printing ${pattern}:\n${output}`));
        };
        const timer = setTimeout(() => done(new Error(`webrl did not print ${pattern} within ${timeoutMs} ms:\n${output}`)), timeoutMs);
        listeners.add(check);
        check();
      });
    },
    signal: (name) => void child.kill(name),
    exited,
  };
}

/**
 * Runs `webrl ARGS` in this process with the commands `register` adds (no child process): what it
 * printed to stdout and stderr, and the exit code it set.
 */
export async function runWebrlInProcess(register: (program: Command) => void, ...args: string[]): Promise<{ out: string; err: string; exitCode: number }> {
  const program = new Command('webrl').exitOverride();
  register(program);
  const out: string[] = [];
  const err: string[] = [];
  const { log, error } = console;
  const previousExitCode = process.exitCode;
  console.log = (...parts: unknown[]) => void out.push(parts.join(' '));
  console.error = (...parts: unknown[]) => void err.push(parts.join(' '));
  process.exitCode = 0;
  try {
    await program.parseAsync(['node', 'webrl', ...args]);
    return { out: out.join('\n'), err: err.join('\n'), exitCode: Number(process.exitCode ?? 0) };
  } finally {
    console.log = log;
    console.error = error;
    process.exitCode = previousExitCode;
  }
}
