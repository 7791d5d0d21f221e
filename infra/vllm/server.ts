/**
 * A vLLM OpenAI-compatible server run by this project (tests, benchmarks, a laptop campaign), started
 * with the Python that infra/vllm/environment.ts provisions:
 *
 *   python -m vllm.entrypoints.openai.api_server --model DIR --served-model-name NAME
 *          [--enable-lora --max-lora-rank R] --max-model-len N --dtype D --port P
 *
 * with VLLM_ALLOW_RUNTIME_LORA_UPDATING=True (the serving handoff's load/unload routes) and
 * VLLM_CPU_KVCACHE_SPACE. It is ready when it has answered a real completion: vLLM says "startup
 * complete" before its engine has run a request, and an engine that cannot run the model (a head size
 * its CPU attention lacks, an instruction the machine refuses) dies only then.
 *
 * The server runs in its own process group (its engine runs in child processes), so stopping or killing
 * it takes the whole group.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, open } from 'node:fs/promises';
import { dirname } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { exited, freePort, waitUntil } from '../processes';

export interface VllmServerOptions {
  /** A Python that imports vllm (ensureVllm). */
  python: string;
  /** A Hugging Face checkpoint directory. */
  model: string;
  servedModelName: string;
  host?: string;
  /** Default: a free port. */
  port?: number;
  /** Runtime LoRA loading with adapters up to this rank; unset, no LoRA. */
  maxLoraRank?: number;
  /** Adapters held at once (vLLM's --max-loras; default 4). */
  maxLoras?: number;
  maxModelLen?: number;
  /**
   * vLLM's --enforce-eager: no torch.compile warm-up. Without LoRA, the CPU build compiles the model at
   * start (minutes on 2 cores, cached under ~/.cache/vllm afterwards); with LoRA it never compiles.
   */
  enforceEager?: boolean;
  /**
   * float32 by default: on CPUs with AMX, vLLM's CPU build runs bf16 through AMX tile instructions, which
   * a machine (or sandbox) that does not grant them answers with SIGILL on the first request.
   */
  dtype?: 'float32' | 'bfloat16' | 'auto';
  /** VLLM_CPU_KVCACHE_SPACE in GiB (default 1). */
  kvCacheGiB?: number;
  logFile: string;
  /** More environment for the server (e.g. VLLM_PLUGINS to compare vLLM with and without the project's plugin). */
  env?: Record<string, string>;
  /** Default 5 minutes (a cold start on 2 cores takes about one). */
  readyTimeoutMs?: number;
}

export interface RunningVllm {
  /** e.g. http://127.0.0.1:8123/v1 */
  baseUrl: string;
  port: number;
  pid: number;
  /** SIGTERM to the group, SIGKILL after a grace period; resolves once it is gone. */
  stop(): Promise<void>;
  /** SIGKILL to the group at once: a crash. */
  kill(): Promise<void>;
}

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-child.pid!, signal);
  } catch {
    // Already gone.
  }
}

/** One real completion, the only proof that the engine runs the model. */
async function answers(baseUrl: string, model: string): Promise<boolean> {
  const response = await fetch(`${baseUrl}/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model, prompt: 'Hello', max_tokens: 1, temperature: 0 }),
    signal: AbortSignal.timeout(60_000),
  });
  if (!response.ok) return false;
  const reply = (await response.json()) as { choices?: { text?: unknown }[] };
  return typeof reply.choices?.[0]?.text === 'string';
}

export async function startVllmServer(options: VllmServerOptions): Promise<RunningVllm> {
  const host = options.host ?? '127.0.0.1';
  const port = options.port ?? (await freePort());
  const args = ['-m', 'vllm.entrypoints.openai.api_server', '--model', options.model, '--served-model-name', options.servedModelName];
  if (options.maxLoraRank !== undefined)
    args.push('--enable-lora', '--max-lora-rank', String(options.maxLoraRank), '--max-loras', String(options.maxLoras ?? 4));
  if (options.maxModelLen !== undefined) args.push('--max-model-len', String(options.maxModelLen));
  if (options.enforceEager) args.push('--enforce-eager');
  args.push('--dtype', options.dtype ?? 'float32', '--host', host, '--port', String(port));
  await mkdir(dirname(options.logFile), { recursive: true });
  const log = await open(options.logFile, 'a');
  let child: ChildProcess;
  try {
    child = spawn(options.python, args, {
      env: {
        ...process.env,
        VLLM_ALLOW_RUNTIME_LORA_UPDATING: 'True',
        VLLM_CPU_KVCACHE_SPACE: String(options.kvCacheGiB ?? 1),
        // No hub here: the model is a local directory, and nothing should be looked up elsewhere.
        HF_HUB_OFFLINE: '1',
        VLLM_NO_USAGE_STATS: '1',
        ...options.env,
      },
      stdio: ['ignore', log.fd, log.fd],
      detached: true,
    });
  } finally {
    await log.close();
  }
  // A test or benchmark that dies leaves no server behind.
  const onExit = () => signalGroup(child, 'SIGKILL');
  process.once('exit', onExit);
  const baseUrl = `http://${host}:${port}/v1`;
  const gone = async (signal: NodeJS.Signals, graceMs: number) => {
    signalGroup(child, signal);
    const deadline = Date.now() + graceMs;
    while (child.exitCode === null && child.signalCode === null && Date.now() < deadline) await delay(100);
    signalGroup(child, 'SIGKILL');
    await exited(child);
    process.removeListener('exit', onExit);
  };
  try {
    await waitUntil(`vLLM serving ${options.model} on ${baseUrl}`, () => answers(baseUrl, options.servedModelName), {
      timeoutMs: options.readyTimeoutMs ?? 300_000,
      child,
      logFile: options.logFile,
    });
  } catch (error) {
    await gone('SIGKILL', 0);
    throw error;
  }
  return { baseUrl, port, pid: child.pid!, stop: () => gone('SIGTERM', 15_000), kill: () => gone('SIGKILL', 0) };
}
