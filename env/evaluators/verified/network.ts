/**
 * An episode's network trace, recorded from Playwright's request events as HAR entries (HAR 1.2's
 * `log.entries` shape, which WebArena-Verified's NetworkEventEvaluator reads: the request's method,
 * URL, headers and post data; the response's status, headers, cookies, redirect and, for text
 * answers, the body). Playwright's own `recordHar` writes its file only when the context closes,
 * after the episode is scored, so the entries are built here as the requests finish.
 *
 * The evaluator gets the entries whole; what is stored beside the trace (`storedHar`) has its cookies,
 * credentials and secret-looking form fields removed, and is cut to a size cap, saying so when cut.
 */
import type { BrowserContext, Request } from 'playwright-core';
import type { HarEntry } from './client';

/** Responses whose bodies the evaluator may read (JSON, HTML, text), each kept up to this size. */
const BODY_TYPES = /json|text|html|xml|javascript/;
const MAX_BODY_CHARS = 256 * 1024;
/** The evaluator skips static assets (NetworkEvent.is_evaluation_event); their bodies are not read. */
const STATIC_PATH = /\.(css|js|png|jpe?g|gif|svg|woff2?|ttf|ico|webp)$/i;

const headerList = (headers: Record<string, string>) =>
  Object.entries(headers).flatMap(([name, value]) => value.split('\n').map((line) => ({ name, value: line })));

function cookiesOf(setCookie: string | undefined): { name: string; value: string }[] {
  return (setCookie ?? '')
    .split('\n')
    .filter((line) => line.includes('='))
    .map((line) => {
      const pair = line.split(';')[0]!;
      const at = pair.indexOf('=');
      return { name: pair.slice(0, at).trim(), value: pair.slice(at + 1).trim() };
    });
}

async function entryOf(request: Request, started: Date): Promise<HarEntry | undefined> {
  const response = await request.response().catch(() => null);
  if (!response) return undefined;
  const url = new URL(request.url());
  const [requestHeaders, responseHeaders] = await Promise.all([request.allHeaders(), response.allHeaders()]);
  const mimeType = responseHeaders['content-type'] ?? '';
  let text: string | undefined;
  const isRedirect = response.status() >= 300 && response.status() < 400;
  if (!isRedirect && BODY_TYPES.test(mimeType) && !STATIC_PATH.test(url.pathname)) {
    text = await response
      .text()
      .then((body) => body.slice(0, MAX_BODY_CHARS))
      .catch(() => undefined);
  }
  const postData = request.postData();
  return {
    startedDateTime: started.toISOString(),
    time: Math.max(0, Date.now() - started.getTime()),
    request: {
      method: request.method(),
      url: request.url(),
      httpVersion: 'HTTP/1.1',
      headers: headerList(requestHeaders),
      queryString: [...url.searchParams].map(([name, value]) => ({ name, value })),
      cookies: [],
      ...(postData === null ? {} : { postData: { mimeType: requestHeaders['content-type'] ?? '', text: postData } }),
    },
    response: {
      status: response.status(),
      statusText: response.statusText(),
      httpVersion: 'HTTP/1.1',
      headers: headerList(responseHeaders),
      cookies: cookiesOf(responseHeaders['set-cookie']),
      redirectURL: isRedirect ? new URL(responseHeaders.location ?? '', request.url()).href : '',
      content: { size: text?.length ?? -1, mimeType, ...(text === undefined ? {} : { text }) },
    },
  };
}

/** Records every finished request of a context, in the order the requests started. */
export class NetworkRecorder {
  private readonly pending: Promise<HarEntry | undefined>[] = [];
  private readonly startedAt = new Map<Request, Date>();
  private readonly onRequest = (request: Request) => void this.startedAt.set(request, new Date());
  private readonly onFinished = (request: Request) => {
    this.pending.push(entryOf(request, this.startedAt.get(request) ?? new Date()).catch(() => undefined));
  };

  constructor(private readonly context: BrowserContext) {
    context.on('request', this.onRequest);
    context.on('requestfinished', this.onFinished);
  }

  /** Stops recording; the entries so far, in order of their start. */
  async stop(): Promise<HarEntry[]> {
    this.context.off('request', this.onRequest);
    this.context.off('requestfinished', this.onFinished);
    const entries = (await Promise.all(this.pending)).filter((entry): entry is HarEntry => entry !== undefined);
    return entries.sort((a, b) => String(a.startedDateTime).localeCompare(String(b.startedDateTime)));
  }
}

/** Header names and form fields never stored: cookies, credentials, tokens, keys. */
const SECRET_NAME = /cookie|authori[sz]ation|auth|token|secret|password|passwd|key|session|form_key/i;

type Pair = { name: string; value: string };
const withoutSecrets = (pairs: Pair[]) => pairs.filter((pair) => !SECRET_NAME.test(pair.name));

function strippedPostData(postData: { mimeType: string; text: string }): { mimeType: string; text: string } {
  if (!postData.mimeType.includes('application/x-www-form-urlencoded')) return postData;
  const form = new URLSearchParams(postData.text);
  for (const name of [...form.keys()]) if (SECRET_NAME.test(name)) form.set(name, '[removed]');
  return { ...postData, text: form.toString() };
}

/** The default cap of a stored network trace. */
export const MAX_STORED_HAR_BYTES = 2 * 1024 * 1024;

/**
 * The trace as stored beside the episode's trajectory: a HAR 1.2 file without cookies or credentials;
 * over `maxBytes`, response bodies go first, then the latest entries, and `log.comment` says what was cut.
 */
export function storedHar(entries: readonly HarEntry[], maxBytes = MAX_STORED_HAR_BYTES): string {
  let kept = entries.map((entry) => {
    const request = entry.request as { headers: Pair[]; postData?: { mimeType: string; text: string } };
    const response = entry.response as { headers: Pair[] };
    return {
      ...entry,
      request: {
        ...request,
        headers: withoutSecrets(request.headers),
        cookies: [],
        ...(request.postData ? { postData: strippedPostData(request.postData) } : {}),
      },
      response: { ...response, headers: withoutSecrets(response.headers), cookies: [] },
    };
  });
  const log = (comment?: string) =>
    JSON.stringify({ log: { version: '1.2', creator: { name: 'webrl-temporal', version: '1' }, ...(comment ? { comment } : {}), entries: kept } });
  let text = log();
  if (Buffer.byteLength(text) <= maxBytes) return text;
  kept = kept.map((entry) => ({
    ...entry,
    response: { ...entry.response, content: { ...(entry.response as unknown as { content: object }).content, text: undefined } },
  }));
  const total = kept.length;
  const cut = (count: number) => `cut to ${maxBytes} bytes: response bodies dropped, ${count} of ${total} entries kept`;
  text = log(cut(kept.length));
  while (Buffer.byteLength(text) > maxBytes && kept.length > 0) {
    kept = kept.slice(0, Math.floor(kept.length * 0.8));
    text = log(cut(kept.length));
  }
  return text;
}
