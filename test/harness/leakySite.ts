/**
 * A site whose one page sends every kind of secret issue 57 found in stored network traces, as a
 * browser sends them: a redirect whose `Location` and next URL carry `password`, `token`, `api_key`
 * and `access_token` parameters and the site password as a harmless `q`; JSON bodies with the password
 * at the top and nested; Magento's admin-token request and its bare-string answer; a multipart form
 * with password and token fields; `pwd`/`pin`/`passcode` forms with an upper-case content type and
 * with none; an OAuth token response; the password in a URL path, in the page (entity-encoded and in
 * base64 Basic credentials) and in the Referer of every later request; a session cookie; an API key
 * header. The page shows the answer to its task once every request has finished.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';

export interface LeakySite {
  url: string;
  /** Secret-named values the site makes up (no configuration knows them): only their names can give them away. */
  tokens: string[];
  /** The paths the page requests, each of which a stored network trace must hold (scrubbed). */
  paths: string[];
  /** The task the page answers: WebArena-Verified's format, site `wikipedia`, with its oracle. */
  task(taskId: number): Record<string, unknown>;
  close(): void;
}

const entities = (text: string) => [...text].map((c) => `&#x${c.codePointAt(0)!.toString(16)};`).join('');

async function bodyOf(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** `password` is a site password the worker holds, `apiKey` any other secret it holds (an S3 key). */
export async function serveLeakySite(password: string, apiKey: string): Promise<LeakySite> {
  const [query, api, access, refresh, magento, cookie] = Array.from({ length: 6 }, (_, i) => `leak${i}-${randomBytes(8).toString('hex')}`) as [
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  const pw = JSON.stringify(password);
  const page = `<!DOCTYPE html><html><head><meta charset="utf-8"><title>Leaky</title></head><body>
<h1>Account</h1><p>Signed in with ${entities(password)}</p><p data-auth="Basic ${Buffer.from(`emma:${password}`).toString('base64')}">profile</p>
<p id="answer">loading</p>
<script>
const PW = ${pw};
const json = (path, body) => fetch(path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
const upload = new FormData();
upload.append('title', 'holiday keyword');
upload.append('password', PW);
// The form's token comes from a cookie the redirect set: only its name can give it away.
upload.append('token', document.cookie.match(/leak_csrf=([^;]+)/)[1]);
Promise.all([
  json('/api/login', { username: 'emma', password: PW, user: { pass: PW }, keyword: 'shoes', author: 'emma' }),
  json('/rest/V1/integration/admin/token', { username: 'admin', password: PW }),
  fetch('/api/upload', { method: 'POST', body: upload }),
  fetch('/api/form', { method: 'POST', headers: { 'Content-Type': 'Application/X-WWW-Form-Urlencoded' }, body: 'pwd=' + encodeURIComponent(PW) + '&pin=4242&passcode=' + encodeURIComponent(PW) + '&keyword=x' }),
  fetch('/api/untyped', { method: 'POST', body: new TextEncoder().encode('pwd=' + encodeURIComponent(PW) + '&author=emma') }),
  fetch('/oauth/token'),
  fetch('/users/' + encodeURIComponent(PW) + '/profile'),
  fetch('/api/echo', { headers: { 'X-Api-Key': ${JSON.stringify(apiKey)} } }),
  fetch('/redirect'),
]).then(() => { document.getElementById('answer').textContent = 'The answer is 42'; });
</script></body></html>`;

  const server: Server = createServer((request, response) => {
    void (async () => {
      const url = new URL(request.url ?? '/', 'http://leaky');
      await bodyOf(request);
      const send = (status: number, type: string, body: string, headers: Record<string, string> = {}) => {
        response.writeHead(status, { 'content-type': type, ...headers });
        response.end(body);
      };
      switch (url.pathname) {
        case '/':
          return send(200, 'text/html', '<p>leaky site</p>');
        case '/leak':
          return send(302, 'text/html', '', {
            'set-cookie': `leak_csrf=${query}; Path=/`,
            location: `/leak/page?q=${encodeURIComponent(password)}&password=${encodeURIComponent(password)}&token=${query}&api_key=${api}&access_token=${access}`,
          });
        case '/leak/page':
          return send(200, 'text/html; charset=utf-8', page);
        case '/api/login':
          return send(200, 'application/json', JSON.stringify({ ok: true, refresh_token: refresh }), { 'set-cookie': `leak_session=${cookie}; Path=/` });
        case '/rest/V1/integration/admin/token':
          return send(200, 'application/json', JSON.stringify(magento));
        case '/oauth/token':
          return send(200, 'application/json', JSON.stringify({ access_token: access, refresh_token: refresh, token_type: 'bearer' }));
        case '/api/echo':
          return send(200, 'text/html', `<pre>you are ${entities(password)}</pre><input type="password" name="current" value="${password}">`);
        case '/redirect':
          return send(302, 'text/plain', '', { location: `/landing?access_token=${access}` });
        default:
          return send(200, 'application/json', '{"ok":true}');
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: origin,
    tokens: [query, api, access, refresh, magento, cookie],
    paths: [
      '/leak',
      '/leak/page',
      '/api/login',
      '/rest/V1/integration/admin/token',
      '/api/upload',
      '/api/form',
      '/api/untyped',
      '/oauth/token',
      '/api/echo',
      '/redirect',
      '/landing',
    ],
    task: (taskId) => ({
      sites: ['wikipedia'],
      task_id: taskId,
      intent_template_id: 9001,
      start_urls: ['__WIKIPEDIA__/leak'],
      intent: 'What is the answer the account page shows?',
      intent_template: 'What is the answer the account page shows?',
      instantiation_dict: {},
      eval: [
        {
          evaluator: 'AgentResponseEvaluator',
          results_schema: { type: 'array', items: { type: 'string' } },
          expected: { task_type: 'retrieve', status: 'SUCCESS', retrieved_data: ['42'] },
        },
      ],
      revision: 1,
      oracle: [{ action: 'exit', message: JSON.stringify({ task_type: 'RETRIEVE', status: 'SUCCESS', retrieved_data: ['42'], error_details: null }) }],
    }),
    close: () => server.close(),
  };
}
