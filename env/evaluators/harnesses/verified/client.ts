/**
 * The TypeScript side of WebArena-Verified's official evaluator: one long-lived Python process per
 * worker (service.py, in the environment of ./environment.ts) answering one JSON line per request.
 * The process holds the worker open only while a request is pending, so a worker (or a test) that is
 * done exits without closing it; `close()` ends it at once.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import type { Socket } from 'node:net';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { ensureWebArenaVerified } from './environment';

const SERVICE = join(dirname(fileURLToPath(import.meta.url)), 'service.py');

const evaluatorResultSchema = z.looseObject({
  evaluator_name: z.string(),
  status: z.string(),
  score: z.number(),
  error_msg: z.string().nullable().optional(),
  assertions: z
    .array(z.looseObject({ assertion_name: z.string(), status: z.string(), assertion_msgs: z.array(z.string()).nullable().optional() }))
    .nullable()
    .optional(),
});

/** The package's TaskEvalResult (what it writes as eval_result.json); the fields read here checked. */
export const taskEvalResultSchema = z.looseObject({
  task_id: z.number(),
  status: z.string(),
  score: z.number(),
  evaluators_results: z.array(evaluatorResultSchema),
  error_msg: z.string().nullable().optional(),
});
export type TaskEvalResult = z.infer<typeof taskEvalResultSchema>;

const assetsSchema = z.object({ version: z.string(), dataset: z.string(), subsets: z.string() });
export type VerifiedAssets = z.infer<typeof assetsSchema>;

const answerSchema = z.object({ id: z.number().nullable(), result: z.unknown().optional(), ms: z.number().optional(), error: z.string().optional() });

/** One HAR entry (`log.entries[i]`), as the evaluator reads it. */
export type HarEntry = Record<string, unknown>;

export interface EvaluationRequest {
  /** The task in WebArena-Verified's format (placeholders kept). */
  task: unknown;
  /** The agent's response: the parsed JSON object, or the raw text when it is not JSON. */
  response: unknown;
  /** The episode's network trace. */
  entries: readonly HarEntry[];
  /** Site name -> URL, for the task's placeholders. */
  sites: Record<string, string>;
}

export class VerifiedEvaluator {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (value: { result: unknown; ms: number }) => void; reject: (error: Error) => void }>();
  private stderr = '';
  private exited: Error | undefined;

  private constructor(private readonly child: ChildProcessWithoutNullStreams) {
    child.stderr.on('data', (chunk: Buffer) => {
      this.stderr = (this.stderr + chunk.toString()).slice(-4000);
    });
    createInterface({ input: child.stdout }).on('line', (line) => this.answer(line));
    child.on('exit', (code, signal) => {
      this.exited = new Error(`the WebArena-Verified evaluator exited (${signal ?? `code ${code}`}): ${this.stderr.trim().split('\n').slice(-3).join(' | ')}`);
      for (const { reject } of this.pending.values()) reject(this.exited);
      this.pending.clear();
    });
    this.idle();
  }

  /** Starts the process with the provisioned Python (installed on first use). */
  static async start(python?: string): Promise<VerifiedEvaluator> {
    const interpreter = python ?? (await ensureWebArenaVerified()).path;
    return new VerifiedEvaluator(spawn(interpreter, [SERVICE], { stdio: ['pipe', 'pipe', 'pipe'] }));
  }

  /** Where the installed package keeps its task file and subsets. */
  async assets(): Promise<VerifiedAssets> {
    return assetsSchema.parse((await this.request({ op: 'assets' })).result);
  }

  /** The package's result, and how long the package took (ms, measured in the process: no queueing). */
  async evaluate(request: EvaluationRequest): Promise<{ result: TaskEvalResult; ms: number }> {
    const { result, ms } = await this.request({ op: 'evaluate', ...request });
    return { result: taskEvalResultSchema.parse(result), ms };
  }

  close(): void {
    this.child.kill();
  }

  private request(body: Record<string, unknown>): Promise<{ result: unknown; ms: number }> {
    if (this.exited) return Promise.reject(this.exited);
    const id = this.nextId++;
    const answer = new Promise<{ result: unknown; ms: number }>((resolve, reject) => this.pending.set(id, { resolve, reject }));
    this.busy();
    this.child.stdin.write(`${JSON.stringify({ id, ...body })}\n`);
    return answer;
  }

  /** Whether the process still runs (a dead one is replaced by `sharedVerifiedEvaluator`). */
  get alive(): boolean {
    return this.exited === undefined;
  }

  private answer(line: string): void {
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch {
      return; // not an answer (the package printed something): the requests wait for theirs
    }
    const parsed = answerSchema.safeParse(json);
    if (!parsed.success || parsed.data.id === null) return;
    const waiter = this.pending.get(parsed.data.id);
    if (!waiter) return;
    this.pending.delete(parsed.data.id);
    if (parsed.data.error !== undefined) waiter.reject(new Error(`the WebArena-Verified evaluator: ${parsed.data.error}`));
    else waiter.resolve({ result: parsed.data.result, ms: parsed.data.ms ?? 0 });
    if (this.pending.size === 0) this.idle();
  }

  /** The pipes are sockets; a worker waits on them only while an answer is due. */
  private pipes(): Socket[] {
    return [this.child.stdin, this.child.stdout, this.child.stderr] as unknown as Socket[];
  }

  private busy(): void {
    this.child.ref();
    for (const pipe of this.pipes()) pipe.ref();
  }

  private idle(): void {
    this.child.unref();
    for (const pipe of this.pipes()) pipe.unref();
  }
}

let shared: Promise<VerifiedEvaluator> | undefined;

/** This process's evaluator, started on first use and again when the last one exited (or was closed). */
export async function sharedVerifiedEvaluator(): Promise<VerifiedEvaluator> {
  shared ??= VerifiedEvaluator.start().catch((error: unknown) => {
    shared = undefined;
    throw error;
  });
  const evaluator = await shared;
  if (evaluator.alive) return evaluator;
  shared = undefined;
  return sharedVerifiedEvaluator();
}
