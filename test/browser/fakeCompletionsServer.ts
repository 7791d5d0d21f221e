/**
 * A protocol-faithful stand-in for an OpenAI-compatible completions server (vLLM-style): POST
 * /v1/completions answers with the real response shape, or with a scripted failure, one script step per
 * request.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { textCompletion } from '../models/fixtures/servers';

export type Reply =
  | { kind: 'completion'; text: string }
  | { kind: 'status'; status: number; message: string }
  /** A JSON content type with a body that is not JSON. */
  | { kind: 'broken-json' }
  /** Valid JSON that is not a completion. */
  | { kind: 'no-choices' }
  /** Answers only after `delayMs`. */
  | { kind: 'slow'; delayMs: number; text: string };

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
}

export interface FakeCompletionsServer {
  baseURL: string;
  requests: RecordedRequest[];
  /** Replies for the next requests, in order; when empty, every request gets `fallback`. */
  script: Reply[];
  fallback: Reply;
  close(): Promise<void>;
}

export async function startFakeCompletionsServer(): Promise<FakeCompletionsServer> {
  const fake: Omit<FakeCompletionsServer, 'baseURL' | 'close'> = {
    requests: [],
    script: [],
    fallback: { kind: 'completion', text: 'do(action="Scroll Down")' },
  };
  const pending = new Set<NodeJS.Timeout>();
  const server: Server = createServer((request, response) => {
    let raw = '';
    request.on('data', (chunk: Buffer) => (raw += chunk.toString()));
    request.on('end', () => {
      const body = raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
      fake.requests.push({ method: request.method ?? '', path: request.url ?? '', headers: request.headers, body });
      if (request.method !== 'POST' || request.url !== '/v1/completions') {
        response.writeHead(404, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ error: { message: 'not found', type: 'invalid_request_error' } }));
        return;
      }
      const reply = fake.script.shift() ?? fake.fallback;
      const model = String(body.model ?? '');
      const json = { 'content-type': 'application/json' };
      switch (reply.kind) {
        case 'completion':
          response.writeHead(200, json).end(JSON.stringify(textCompletion(reply.text, model)));
          return;
        case 'status':
          response.writeHead(reply.status, json).end(JSON.stringify({ error: { message: reply.message, type: 'server_error' } }));
          return;
        case 'broken-json':
          response.writeHead(200, json).end('{"id": "cmpl-test", "choices": [');
          return;
        case 'no-choices':
          response.writeHead(200, json).end(JSON.stringify({ id: 'cmpl-test', object: 'text_completion' }));
          return;
        case 'slow': {
          const timer = setTimeout(() => {
            pending.delete(timer);
            if (!response.destroyed) response.writeHead(200, json).end(JSON.stringify(textCompletion(reply.text, model)));
          }, reply.delayMs);
          pending.add(timer);
        }
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return Object.assign(fake, {
    baseURL: `http://127.0.0.1:${port}/v1`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of pending) clearTimeout(timer);
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}
