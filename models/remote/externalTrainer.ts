/**
 * Runs an external trainer command (a GPU trainer in Python, say) as one training step of a phase:
 *
 *   command    a template such as `python train.py --data {data} --init {actor} --out {out}`; it is split
 *              into arguments here (whitespace, with '...' / "..." quoting) and run without a shell, so
 *              substituted paths cannot inject anything
 *   inputs     {name: storage key}: each checkpoint (a file, or a directory with its listing; see
 *              storage/checkpoints.ts) is staged in a fresh temporary directory and `{name}` becomes
 *              its local path
 *   optional   names of inputs a job may lack (`init` for a first training, say): an argument naming
 *              one this job lacks is left out, and so is the `--option` just before it when the
 *              argument is the placeholder alone (`--init {init}`), so one template serves every job
 *   outputs    {name: storage key}: `{name}` becomes a path in the temporary directory's out/; after a
 *              zero exit each is stored as a checkpoint (a file, or a directory with its listing)
 *   progress   a stdout or stderr line `PROGRESS <fraction> [<step>/<total>]` calls onProgress (the
 *              fraction in [0, 1], and the steps when the trainer counts them); every line goes to onLog
 *   failure    what no retry can fix rejects with an ExternalTrainerError (a permanent error type:
 *              the phase waits for an operator at once): exit code 2 (bad input, nothing written) or 3
 *              (the run went wrong: NaN loss, diverging KL), a program that cannot be started, a zero
 *              exit without its output. What a retry may fix rejects with a TrainerInterruptedError
 *              (retried): any other exit code (a crash, out of memory), a signal, the timeout, a
 *              cancellation. Both hold the exit code and the last log lines.
 *
 * The child inherits this process's environment (API keys included, from the environment only) plus
 * `env`; nothing of the environment is logged. The temporary directory is removed afterwards.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { createInterface } from 'node:readline';
import type { ObjectInfo } from '../../storage/artifactStore';
import { downloadCheckpoint, uploadCheckpoint, type CheckpointStore } from '../../storage/checkpoints';
import { parseProgressLine, type TrainerProgress } from './trainerProgress';

/** The part of ArtifactStore the runner needs. */
export type FileStore = CheckpointStore;

export interface ExternalTrainerOptions {
  command: string;
  inputs: Record<string, string>;
  /**
   * Where to stage and write (default: a fresh temporary directory). Given, it is kept after a failure
   * so that a retried job finds its own partial output under out/, and removed after a success.
   */
  workDir?: string;
  /** Inputs the template may name that this job lacks (see above). */
  optional?: readonly string[];
  outputs: Record<string, string>;
  store: FileStore;
  env?: Record<string, string>;
  cwd?: string;
  timeoutMs?: number;
  signal?: AbortSignal;
  onLog?(line: string, stream: 'stdout' | 'stderr'): void;
  onProgress?(progress: TrainerProgress): void;
}

export interface ExternalTrainerResult {
  /** Objects written, per output name (a directory's files, then its listing). */
  uploaded: Record<string, ObjectInfo[]>;
  logTail: string[];
}

export class ExternalTrainerError extends Error {
  override name = 'ExternalTrainerError';
  constructor(
    message: string,
    readonly exitCode: number | null,
    readonly logTail: string[],
  ) {
    super(message);
  }
}

/** A trainer run that ended in a way a retry may not repeat; the activity is retried. */
export class TrainerInterruptedError extends ExternalTrainerError {
  override name = 'TrainerInterruptedError';
}

/** The trainer contract's exit codes that say a retry would fail the same way (docs/torch-trainer.md). */
const PERMANENT_EXIT_CODES = new Set([2, 3]);

const LOG_TAIL_LINES = 20;
const KILL_GRACE_MS = 5_000;

/** Splits a command template into arguments: whitespace-separated, '...' and "..." group. */
export function splitCommand(template: string): string[] {
  const args: string[] = [];
  let current = '';
  let quote: string | null = null;
  let started = false;
  for (const ch of template) {
    if (quote) {
      if (ch === quote) quote = null;
      else current += ch;
    } else if (ch === '"' || ch === "'") {
      quote = ch;
      started = true;
    } else if (/\s/.test(ch)) {
      if (started) args.push(current);
      current = '';
      started = false;
    } else {
      current += ch;
      started = true;
    }
  }
  if (quote) throw new Error(`the trainer command has an unclosed ${quote}`);
  if (started) args.push(current);
  return args;
}

const PLACEHOLDER = /\{([A-Za-z_][\w-]*)\}/g;

function substitute(args: readonly string[], paths: Record<string, string>, optional: readonly string[]): string[] {
  const result: string[] = [];
  for (const arg of args) {
    const lacking = [...arg.matchAll(PLACEHOLDER)].map((match) => match[1]!).filter((name) => paths[name] === undefined);
    if (lacking.length > 0 && lacking.every((name) => optional.includes(name))) {
      if (new RegExp(`^${PLACEHOLDER.source}$`).test(arg) && result.at(-1)?.startsWith('-')) result.pop();
      continue;
    }
    result.push(
      arg.replace(PLACEHOLDER, (whole, name: string) => {
        const path = paths[name];
        if (path === undefined) throw new Error(`the trainer command names {${name}}, which is neither an input nor an output`);
        return path;
      }),
    );
  }
  return result;
}

export async function runExternalTrainer(options: ExternalTrainerOptions): Promise<ExternalTrainerResult> {
  const args = splitCommand(options.command);
  if (args.length === 0) throw new Error('the trainer command is empty');
  // A given work directory outlives a failed attempt with its out/ (a trainer's step checkpoints), so
  // the retry resumes there; inputs are staged afresh every time. A temporary one is always removed.
  const workDir = options.workDir ?? (await mkdtemp(join(tmpdir(), 'webrl-trainer-')));
  let finished = false;
  const logTail: string[] = [];
  try {
    const paths: Record<string, string> = {};
    await rm(join(workDir, 'in'), { recursive: true, force: true });
    await mkdir(join(workDir, 'in'), { recursive: true });
    await mkdir(join(workDir, 'out'), { recursive: true });
    for (const [name, key] of Object.entries(options.inputs)) {
      const path = join(workDir, 'in', `${name}-${basename(key)}`);
      await downloadCheckpoint(options.store, key, path);
      paths[name] = path;
    }
    for (const name of Object.keys(options.outputs)) paths[name] = join(workDir, 'out', name);
    const [program, ...rest] = substitute(args, paths, options.optional ?? []);

    const exitCode = await new Promise<number>((resolve, reject) => {
      const child = spawn(program!, rest, { cwd: options.cwd, env: { ...process.env, ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] });
      let failure: ExternalTrainerError | undefined;
      const stop = (message: string) => {
        if (failure) return;
        failure = new TrainerInterruptedError(message, null, logTail);
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), KILL_GRACE_MS).unref();
      };
      const timer = options.timeoutMs ? setTimeout(() => stop(`the trainer ran past its ${options.timeoutMs} ms limit`), options.timeoutMs) : undefined;
      const onAbort = () => stop('the trainer was cancelled');
      options.signal?.addEventListener('abort', onAbort, { once: true });
      const read = (stream: NodeJS.ReadableStream, name: 'stdout' | 'stderr') => {
        createInterface({ input: stream, crlfDelay: Infinity }).on('line', (line) => {
          logTail.push(line);
          if (logTail.length > LOG_TAIL_LINES) logTail.shift();
          options.onLog?.(line, name);
          const progress = parseProgressLine(line);
          if (progress) options.onProgress?.(progress);
        });
      };
      read(child.stdout, 'stdout');
      read(child.stderr, 'stderr');
      child.on('error', (error) => {
        const startFailure = new ExternalTrainerError(`cannot start the trainer ${JSON.stringify(program)}: ${error.message}`, null, logTail);
        if (child.pid !== undefined) {
          failure ??= startFailure;
          return;
        }
        // It never started, so no 'close' may follow.
        clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
        reject(startFailure);
      });
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
        if (failure) reject(failure);
        else if (code === null) reject(new TrainerInterruptedError(`the trainer was killed by ${signal}`, null, logTail));
        else resolve(code);
      });
    });
    if (exitCode !== 0) {
      const Failure = PERMANENT_EXIT_CODES.has(exitCode) ? ExternalTrainerError : TrainerInterruptedError;
      throw new Failure(`the trainer exited with code ${exitCode}; last lines:\n${logTail.join('\n')}`, exitCode, [...logTail]);
    }

    const uploaded: Record<string, ObjectInfo[]> = {};
    for (const [name, key] of Object.entries(options.outputs)) {
      const path = paths[name]!;
      if (!existsSync(path)) {
        throw new ExternalTrainerError(`the trainer exited 0 but did not write {${name}} (${path}); last lines:\n${logTail.join('\n')}`, 0, [...logTail]);
      }
      uploaded[name] = await uploadCheckpoint(options.store, key, path);
    }
    finished = true;
    return { uploaded, logTail: [...logTail] };
  } finally {
    if (finished || !options.workDir) await rm(workDir, { recursive: true, force: true });
  }
}
