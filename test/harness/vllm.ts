/**
 * Real vLLM for the tests and benchmarks (infra/vllm): the server provisioned by the project, behind a
 * recording relay that forwards every request unchanged and notes what it asked for (the model, the
 * log-prob mode, the adapter loads with the adapter's files as they were when vLLM read them) and the
 * status vLLM answered. The relay keeps its address when the server behind it is killed and started
 * again, so a campaign configured with the relay's URL lives through a vLLM restart as it would through
 * a restart behind a load balancer.
 */
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { ensureVllm } from '../../infra/vllm/environment';
import { startVllmServer, type RunningVllm, type VllmServerOptions } from '../../infra/vllm/server';
import { ensureTinyModel } from '../../trainers/torch/environment';

/**
 * The tiny random Llama (BOS-adding tokenizer, heads of 64) the serving tests use, cached under the data
 * dir; its context fits the longest actor prompt of the embedded sites.
 */
export const TINY_CONTEXT = 16_384;
export const tinyModel = (): string => ensureTinyModel(undefined, { maxPositionEmbeddings: TINY_CONTEXT });

export interface RelayedRequest {
  method: string;
  path: string;
  status: number;
  model?: string;
  echo?: boolean;
  promptLogprobs?: number;
  loraName?: string;
  loraPath?: string;
  /** For adapter loads: relative path -> sha256 of the files at lora_path when the load was sent. */
  files?: Record<string, string>;
}

export interface RecordedVllm {
  /** The relay's /v1 URL, stable across restarts. */
  baseUrl: string;
  /** The served base model name. */
  base: string;
  maxLoraRank: number | undefined;
  /**
   * 1: vLLM 0.32's CPU build computes prompt log-probs under a LoRA adapter only for a request alone in
   * its batch (its CPU LoRA kernel maps the logits of every prompt position with the batch's per-request
   * indices; two requests kill the engine), so log-probs go one at a time.
   */
  logprobConcurrency: number;
  version: string;
  requests: RelayedRequest[];
  /**
   * Holds the next request to `path` in the relay, before vLLM sees it, until the returned release is
   * called; `held` resolves once such a request has arrived.
   */
  holdNext(path: string): { held: Promise<void>; release(): void };
  /** SIGKILLs the server (the relay answers 502 meanwhile). */
  kill(): Promise<void>;
  /** Starts the server again, with no adapters loaded; resolves once it has answered a completion. */
  start(): Promise<void>;
  close(): Promise<void>;
}

export async function sha256Files(dir: string): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const full = join(entry.parentPath, entry.name);
    files[full.slice(dir.length + 1)] = createHash('sha256')
      .update(await readFile(full))
      .digest('hex');
  }
  return files;
}

async function body(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export async function startRecordedVllm(options: Omit<VllmServerOptions, 'python'>): Promise<RecordedVllm> {
  const tool = await ensureVllm((line) => console.log(line));
  let server: RunningVllm | undefined;
  const requests: RelayedRequest[] = [];
  const holds: { path: string; arrived(): void; released: Promise<void> }[] = [];
  const start = async () => {
    // Eager: a test serves too few tokens for the compile warm-up (2.5 min for SmolLM2 on 2 cores) to pay back.
    server = await startVllmServer({ enforceEager: true, ...options, python: tool.path });
  };
  await start();

  const relay = createServer((request: IncomingMessage, response: ServerResponse) => {
    void (async () => {
      const raw = await body(request);
      const path = (request.url ?? '/').replace(/\?.*$/, '');
      let parsed: Record<string, unknown> = {};
      try {
        parsed = raw.length ? (JSON.parse(raw.toString('utf8')) as Record<string, unknown>) : {};
      } catch {
        // Not JSON: forwarded as it is.
      }
      const noted: RelayedRequest = { method: request.method ?? 'GET', path, status: 0 };
      if (typeof parsed.model === 'string') noted.model = parsed.model;
      if (parsed.echo === true) noted.echo = true;
      if (typeof parsed.prompt_logprobs === 'number') noted.promptLogprobs = parsed.prompt_logprobs;
      if (typeof parsed.lora_name === 'string') noted.loraName = parsed.lora_name;
      if (typeof parsed.lora_path === 'string') {
        noted.loraPath = parsed.lora_path;
        if (path.endsWith('/load_lora_adapter')) noted.files = await sha256Files(parsed.lora_path).catch(() => ({}));
      }
      requests.push(noted);
      const hold = holds.findIndex((h) => h.path === path);
      if (hold >= 0) {
        const [{ arrived, released }] = holds.splice(hold, 1) as [(typeof holds)[number]];
        arrived();
        await released;
      }
      if (!server) {
        noted.status = 502;
        response.writeHead(502, { 'content-type': 'text/plain' }).end('vLLM is down');
        return;
      }
      try {
        const upstream = await fetch(`http://127.0.0.1:${server.port}${request.url ?? '/'}`, {
          method: request.method,
          headers: {
            'content-type': request.headers['content-type'] ?? 'application/json',
            ...(request.headers.authorization ? { authorization: request.headers.authorization } : {}),
          },
          ...(raw.length ? { body: new Uint8Array(raw) } : {}),
        });
        noted.status = upstream.status;
        const answer = Buffer.from(await upstream.arrayBuffer());
        response.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json' }).end(answer);
      } catch (error) {
        noted.status = 502;
        response.writeHead(502, { 'content-type': 'text/plain' }).end(`vLLM did not answer: ${(error as Error).message}`);
      }
    })();
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  const port = (relay.address() as AddressInfo).port;

  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    base: options.servedModelName,
    maxLoraRank: options.maxLoraRank,
    logprobConcurrency: 1,
    version: tool.version,
    requests,
    holdNext(path) {
      let arrived = () => {};
      let release = () => {};
      const held = new Promise<void>((resolve) => (arrived = resolve));
      holds.push({ path, arrived: () => arrived(), released: new Promise<void>((resolve) => (release = resolve)) });
      return { held, release: () => release() };
    },
    async kill() {
      const running = server;
      server = undefined;
      await running?.kill();
    },
    start,
    async close() {
      await new Promise<void>((resolve) => {
        relay.close(() => resolve());
        relay.closeAllConnections();
      });
      const running = server;
      server = undefined;
      await running?.stop();
    },
  };
}
