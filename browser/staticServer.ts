/**
 * Serves a directory of fixture pages over HTTP on 127.0.0.1 (an ephemeral port by default), so rollouts
 * and tests can run against local pages on a closed network.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, resolve, sep } from 'node:path';

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
  '.txt': 'text/plain; charset=utf-8',
};

export interface StaticServer {
  /** Base URL without a trailing slash, e.g. http://127.0.0.1:41234 */
  url: string;
  close(): Promise<void>;
}

/** Serves `root`; a directory path serves its index.html. Paths escaping `root` get 404. */
export async function serveDirectory(root: string, port = 0): Promise<StaticServer> {
  const base = resolve(root);
  const server: Server = createServer((request, response) => {
    const path = decodeURIComponent(new URL(request.url ?? '/', 'http://host').pathname);
    let file = resolve(join(base, path));
    const notFound = () => {
      response.writeHead(404, { 'content-type': 'text/plain' });
      response.end('not found');
    };
    if (file !== base && !file.startsWith(base + sep)) return notFound();
    stat(file)
      .then(async (info) => {
        if (info.isDirectory()) {
          file = join(file, 'index.html');
          info = await stat(file);
        }
        response.writeHead(200, {
          'content-type': CONTENT_TYPES[extname(file)] ?? 'application/octet-stream',
          'content-length': info.size,
          // Each episode has a fresh context (and cache); within one, shared scripts and styles load once.
          'cache-control': 'max-age=300',
        });
        createReadStream(file).pipe(response);
      })
      .catch(notFound);
  });
  // Keep-alive sockets would hold close() open until they time out.
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolveListen, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolveListen());
  });
  const actual = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${actual}`,
    close: () =>
      new Promise<void>((done) => {
        server.close(() => done());
        server.closeAllConnections();
      }),
  };
}
