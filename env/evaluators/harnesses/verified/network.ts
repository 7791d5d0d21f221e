/**
 * An episode's network trace, recorded from Playwright's request events as HAR entries (HAR 1.2's
 * `log.entries` shape, which WebArena-Verified's NetworkEventEvaluator reads: the request's method,
 * URL, headers and post data; the response's status, headers, cookies, redirect and, for text
 * answers, the body). Playwright's own `recordHar` writes its file only when the context closes,
 * after the episode is scored, so the entries are built here as the requests finish.
 *
 * The evaluator gets the entries whole; what is stored beside the trace (`storedHar`) is scrubbed of
 * secrets (storage/scrub.ts) and cut to a size cap, saying so when cut.
 */
import type { BrowserContext, Request } from 'playwright-core';
import { scrubHarEntry } from '../../../../storage/scrub';
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

/** How long `stop` waits for requests still in flight (a page's fetch resolves on its headers, before its body). */
const SETTLE_MS = 2_000;

/** Records every finished request of a context, in the order the requests started. */
export class NetworkRecorder {
  private readonly pending: Promise<HarEntry | undefined>[] = [];
  /** The requests in flight, with when each started. */
  private readonly inFlight = new Map<Request, Date>();
  private settled: (() => void) | undefined;
  private readonly onRequest = (request: Request) => void this.inFlight.set(request, new Date());
  private readonly onFinished = (request: Request) => {
    this.pending.push(entryOf(request, this.inFlight.get(request) ?? new Date()).catch(() => undefined));
    this.settle(request);
  };
  private readonly onFailed = (request: Request) => this.settle(request);

  constructor(private readonly context: BrowserContext) {
    context.on('request', this.onRequest);
    context.on('requestfinished', this.onFinished);
    context.on('requestfailed', this.onFailed);
  }

  private settle(request: Request): void {
    this.inFlight.delete(request);
    if (this.inFlight.size === 0) this.settled?.();
  }

  /** Stops recording once the requests in flight have finished (at most SETTLE_MS); the entries, in order of their start. */
  async stop(): Promise<HarEntry[]> {
    this.context.off('request', this.onRequest);
    if (this.inFlight.size > 0) {
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        this.settled = resolve;
        timer = setTimeout(resolve, SETTLE_MS);
      });
      clearTimeout(timer);
    }
    this.context.off('requestfinished', this.onFinished);
    this.context.off('requestfailed', this.onFailed);
    const entries = (await Promise.all(this.pending)).filter((entry): entry is HarEntry => entry !== undefined);
    return entries.sort((a, b) => String(a.startedDateTime).localeCompare(String(b.startedDateTime)));
  }
}

/** The default cap of a stored network trace. */
export const MAX_STORED_HAR_BYTES = 2 * 1024 * 1024;
/** What a cut string keeps at least, so a trimmed entry still shows what it was. */
const MIN_CUT_CHARS = 256;

const bytesOf = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

/** `value` with every string longer than `chars` cut to that length, saying how much was cut. */
function cutStrings(value: unknown, chars: number): unknown {
  if (typeof value === 'string') return value.length > chars ? `${value.slice(0, chars)}[... ${value.length - chars} characters cut]` : value;
  if (Array.isArray(value)) return value.map((item) => cutStrings(item, chars));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, cutStrings(item, chars)]));
}

/** An entry cut to `maxBytes` where it can be: its longest strings shortened, never below MIN_CUT_CHARS. */
function trimmedEntry(entry: HarEntry, maxBytes: number): HarEntry {
  let chars = Math.max(MIN_CUT_CHARS, maxBytes);
  let trimmed = entry;
  while (bytesOf(trimmed) > maxBytes && chars > MIN_CUT_CHARS) {
    chars = Math.max(MIN_CUT_CHARS, Math.floor(chars / 2));
    trimmed = cutStrings(entry, chars) as HarEntry;
  }
  return trimmed;
}

/**
 * The trace as stored beside the episode's trajectory: a HAR 1.2 file scrubbed of secrets
 * (storage/scrub.ts: credentials, cookies, secret fields and values, token responses). Over
 * `maxBytes`, response bodies go first, then an entry too large for its share of the cap has its
 * longest strings cut, then the latest entries go; `log.comment` says what was cut.
 */
export function storedHar(entries: readonly HarEntry[], maxBytes = MAX_STORED_HAR_BYTES): string {
  const logOf = (kept: readonly HarEntry[], comment?: string) =>
    JSON.stringify({ log: { version: '1.2', creator: { name: 'webrl-temporal', version: '1' }, ...(comment ? { comment } : {}), entries: kept } });
  let kept: HarEntry[] = entries.map(scrubHarEntry);
  let text = logOf(kept);
  if (Buffer.byteLength(text) <= maxBytes) return text;
  kept = kept.map((entry) => {
    const response = entry.response as { content?: object };
    return { ...entry, response: { ...response, content: { ...response.content, text: undefined } } };
  });
  const total = kept.length;
  const cuts = ['response bodies dropped'];
  const comment = (count: number) => `cut to ${maxBytes} bytes: ${cuts.join(', ')}, ${count} of ${total} entries kept`;
  text = logOf(kept, comment(total));
  if (Buffer.byteLength(text) > maxBytes) {
    // Each entry's share of the cap (the comment written as long as it can get; one comma per entry).
    cuts.push('long values of large entries cut');
    const share = Math.floor((maxBytes - Buffer.byteLength(logOf([], comment(total)))) / Math.max(1, total)) - 1;
    kept = kept.map((entry) => (bytesOf(entry) > share ? trimmedEntry(entry, share) : entry));
    text = logOf(kept, comment(total));
  }
  while (Buffer.byteLength(text) > maxBytes && kept.length > 0) {
    kept = kept.slice(0, Math.floor(kept.length * 0.8));
    text = logOf(kept, comment(kept.length));
  }
  return text;
}
