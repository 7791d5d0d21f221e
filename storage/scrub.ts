/**
 * The scrubber: what a page or a server handed back is stored only after it has been through here
 * (network traces, trajectory rows and records, score files, outcomes, logs, reports). It replaces
 *
 * - the value of every field whose name is a secret's (`SECRET_NAMES`, matched exactly after case and
 *   separators are folded, so `keyword` and `author` stay): JSON keys at any depth, form and multipart
 *   fields, query-string and fragment parameters, headers, `<input>` values of HTML forms;
 * - every cookie's value (in `Cookie`/`Set-Cookie` headers and HAR cookie lists), bar a few that hold
 *   no credential and that WebArena-Verified's evaluator reads (`HARMLESS_COOKIES`);
 * - URL credentials (`http://user:pass@host/` keeps neither);
 * - token responses (a bare JSON string from a `.../token` endpoint, such as Magento's admin token);
 * - every secret value the process knows (config/secrets.ts `knownSecretValues`: site passwords, API
 *   and S3 keys) wherever it appears, also URL-encoded, HTML-entity or JSON escaped, and base64 encoded.
 *
 * Replaced values read `[redacted]`; inside a URL or form (`name=value`) they read `%5Bredacted%5D`,
 * so that the URL still parses. Structure is kept: names, URLs' other parts, and every other value
 * stay as they were, which lets the stored HAR be scored again by WebArena-Verified's evaluator.
 */
import { knownSecretValues } from '../config/secrets';

export const REDACTED = '[redacted]';
/** The marker in a URL or form body: `[redacted]`, percent-encoded. */
export const REDACTED_IN_URL = encodeURIComponent(REDACTED);

/** Field names that hold secrets, lower case without separators (`API-Key`, `api_key`, `apiKey` are all `apikey`). */
const SECRET_NAMES = new Set([
  'password',
  'passwd',
  'pwd',
  'pass',
  'passcode',
  'passphrase',
  'pin',
  'newpassword',
  'oldpassword',
  'currentpassword',
  'confirmpassword',
  'passwordconfirmation',
  'otp',
  'otpattempt',
  'token',
  'accesstoken',
  'refreshtoken',
  'idtoken',
  'authtoken',
  'bearertoken',
  'sessiontoken',
  'securitytoken',
  'xamzsecuritytoken',
  'apitoken',
  'privatetoken',
  'personalaccesstoken',
  'csrftoken',
  'xcsrftoken',
  'xsrftoken',
  'xxsrftoken',
  'csrfmiddlewaretoken',
  'authenticitytoken',
  'formkey',
  'apikey',
  'xapikey',
  'secret',
  'clientsecret',
  'secretkey',
  'secretaccesskey',
  'privatekey',
  'sessionid',
  'authorization',
  'proxyauthorization',
  'cookie',
  'setcookie',
]);

/** Whether a field name names a secret; a bracketed or dotted name (`login[password]`, `user.pass`) is judged by its last part. */
export function isSecretName(name: string): boolean {
  const last =
    name
      .split(/[[\].]/)
      .filter(Boolean)
      .at(-1) ?? name;
  return SECRET_NAMES.has(last.toLowerCase().replace(/[^a-z0-9]/g, ''));
}

function decodeFormName(name: string): string {
  try {
    return decodeURIComponent(name.replace(/\+/g, ' '));
  } catch {
    return name;
  }
}

// ---- secret values, in every encoding they may take ----

const escapeRegex = (text: string) => text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
/** The hex digits of `code` (at least `width` of them), each letter in either case. */
const hexDigits = (code: number, width = 0) =>
  [...code.toString(16).padStart(width, '0')].map((digit) => (/[a-f]/.test(digit) ? `[${digit}${digit.toUpperCase()}]` : digit)).join('');
const NAMED_ENTITIES: Record<string, string[]> = { '&': ['&amp;'], '<': ['&lt;'], '>': ['&gt;'], '"': ['&quot;'], "'": ['&apos;'] };

/** One character as written literally, percent-encoded (once or twice), as an HTML entity or as a JSON escape. */
function characterPattern(character: string): string {
  const code = character.codePointAt(0)!;
  const percent = [...Buffer.from(character)].map((byte) => `%(?:25)?${hexDigits(byte, 2)}`).join('');
  const forms = [escapeRegex(character), percent, `&#0*${code};`, `&#[xX]0*${hexDigits(code)};`, ...(NAMED_ENTITIES[character] ?? [])];
  if (code < 0x10000) forms.push(`\\\\u${hexDigits(code, 4)}`);
  if (character === ' ') forms.push('\\+');
  if (character === '"' || character === '\\' || character === '/') forms.push(`\\\\${escapeRegex(character)}`);
  return `(?:${forms.join('|')})`;
}

/** What any base64 text holding `value` at any byte offset contains: the characters that depend on its bytes alone. */
function base64Fragments(value: string): string[] {
  const bytes = Buffer.from(value);
  const fragments: string[] = [];
  for (let offset = 0; offset < 3; offset++) {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64');
    const fragment = encoded.slice(Math.ceil((8 * offset) / 6), Math.floor((8 * (offset + bytes.length)) / 6));
    if (fragment.length >= 8) fragments.push(fragment, fragment.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  return fragments;
}

let compiled: { key: string; pattern: RegExp | undefined } = { key: '', pattern: undefined };

/** The pattern of every secret value known now (recompiled only when that set changes). */
function secretValuePattern(): RegExp | undefined {
  const values = knownSecretValues().sort((a, b) => b.length - a.length || a.localeCompare(b));
  const key = values.join('\u0000');
  if (key !== compiled.key) {
    const alternatives = values.flatMap((value) => [[...value].map(characterPattern).join(''), ...base64Fragments(value).map(escapeRegex)]);
    compiled = { key, pattern: alternatives.length ? new RegExp(alternatives.join('|'), 'g') : undefined };
  }
  return compiled.pattern;
}

type Known = RegExp | undefined;
const replaceKnown = (known: Known, text: string) => (known ? text.replace(known, REDACTED) : text);

/** `text` with every known secret value, in any of its encodings, replaced. */
export function scrubSecretValues(text: string): string {
  return replaceKnown(secretValuePattern(), text);
}

// ---- text: URLs, name=value pairs, JSON fragments ----

/** The user information of a URL (`scheme://user:password@`). */
const URL_CREDENTIALS = /(:\/\/)[^\s/?#@"'<>]*@/g;
/** A `name=value` pair as in a query string, fragment, form body or log line (the name read whole: no backtracking into it). */
const NAME_VALUE = /(?<![\w.\-[\]%+])(?=([\w.\-[\]%+]+))\1=[^&#;\s"'<>]+/g;
/** A `"name": value` member of JSON text (a string, number or literal value). */
const JSON_MEMBER = /("((?:[^"\\]|\\.)*)"\s*:\s*)("(?:[^"\\]|\\.)*"|-?\d[\d.eE+-]*|true|false|null)/g;

/** The value attributes of `<input>`s that are password fields or carry a secret-named field. */
function scrubHtmlInputs(html: string): string {
  return html.replace(/<input\b[^>]*>/gi, (tag) => {
    const name = /\bname\s*=\s*["']?([^"'\s>]*)/i.exec(tag)?.[1];
    const secret = /\btype\s*=\s*["']?password\b/i.test(tag) || (name !== undefined && isSecretName(name));
    return secret ? tag.replace(/(\bvalue\s*=\s*)("[^"]*"|'[^']*'|[^\s>]*)/i, `$1"${REDACTED}"`) : tag;
  });
}

function textWith(known: Known, text: string): string {
  const scrubbed = scrubHtmlInputs(text)
    .replace(URL_CREDENTIALS, `$1${REDACTED_IN_URL}@`)
    .replace(NAME_VALUE, (pair, name: string) => (isSecretName(decodeFormName(name)) ? `${name}=${REDACTED_IN_URL}` : pair))
    .replace(JSON_MEMBER, (member, head: string, name: string) => (isSecretName(name) ? `${head}"${REDACTED}"` : member));
  return replaceKnown(known, scrubbed);
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype;

// ---- name/value pairs and cookies ----

/**
 * Cookies hold sessions whatever their names, so only these keep their values: they hold no
 * credential, and WebArena-Verified's evaluator reads them (Magento's flash messages, the map's
 * routing engine).
 */
const HARMLESS_COOKIES = new Set(['mage-messages', '_osm_directions_engine']);
const cookieValue = (name: string, value: string) => (HARMLESS_COOKIES.has(name.trim()) ? scrubText(value) : REDACTED);

/** A `Cookie` header (`a=1; b=2`) or `Set-Cookie` lines (`a=1; Path=/`): each cookie's value replaced, the attributes kept. */
function scrubCookieHeader(name: string, value: string): string {
  const setCookie = name.toLowerCase() === 'set-cookie';
  return value
    .split('\n')
    .map((line) =>
      line
        .split(';')
        .map((part, i) => {
          const at = part.indexOf('=');
          if (at < 0 || (setCookie && i > 0)) return part;
          return `${part.slice(0, at)}=${cookieValue(part.slice(0, at), part.slice(at + 1))}`;
        })
        .join(';'),
    )
    .join('\n');
}

type Pair = { name: string; value: string };

/** The value of a `{ name, value }` pair (a header, a form field): cookies cookie by cookie, a secret's name redacted, else text. */
function pairValue(known: Known, name: string, value: string): string {
  if (/^(set-)?cookie$/i.test(name)) return scrubCookieHeader(name, value);
  return isSecretName(name) ? REDACTED : textWith(known, value);
}

function valueWith(known: Known, value: unknown): unknown {
  if (typeof value === 'string') return textWith(known, value);
  if (Array.isArray(value)) return value.map((item: unknown) => valueWith(known, item));
  if (!isPlainObject(value)) return value;
  // A `{ name, value }` pair (a header, a form field) is named by its `name`.
  const pair = typeof value.name === 'string' && typeof value.value === 'string' ? value.name : undefined;
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => {
      if (pair !== undefined && key === 'value') return [key, pairValue(known, pair, item as string)];
      return [replaceKnown(known, key), isSecretName(key) && item !== null && item !== undefined ? REDACTED : valueWith(known, item)];
    }),
  );
}

function knownValuesWith(known: Known, value: unknown): unknown {
  if (typeof value === 'string') return replaceKnown(known, value);
  if (Array.isArray(value)) return value.map((item: unknown) => knownValuesWith(known, item));
  if (!isPlainObject(value)) return value;
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [replaceKnown(known, key), knownValuesWith(known, item)]));
}

/**
 * Free text (a URL, a header, a log line, an HTML page): URL credentials, secret-named `name=value`
 * pairs, JSON members and `<input>` values, then every known secret value.
 */
export function scrubText(text: string): string {
  return textWith(secretValuePattern(), text);
}

/**
 * Any JSON-like value, deeply: secret-named members replaced whole, every string (and key) scrubbed as
 * text. Non-plain objects (Buffers, dates) are left to their own serialisation.
 */
export function scrubValue<T>(value: T): T {
  return valueWith(secretValuePattern(), value) as T;
}

/** Known secret values alone, deeply (keys too): what the artifact store applies to every JSON object it writes. */
export function scrubSecretValuesIn<T>(value: T): T {
  return knownValuesWith(secretValuePattern(), value) as T;
}
// ---- bodies: JSON, forms, multipart, HTML ----

function parsedJson(text: string): { value: unknown } | undefined {
  if (!/^\s*[[{"]/.test(text)) return undefined;
  try {
    return { value: JSON.parse(text) as unknown };
  } catch {
    return undefined;
  }
}

/** A form body (`a=1&password=x`): secret fields replaced, every other byte kept as sent. */
function scrubForm(text: string): string {
  return scrubSecretValues(
    text
      .split('&')
      .map((pair) => {
        const at = pair.indexOf('=');
        return at > 0 && isSecretName(decodeFormName(pair.slice(0, at))) ? `${pair.slice(0, at)}=${REDACTED_IN_URL}` : pair;
      })
      .join('&'),
  );
}

const FORM_SHAPE = /^[\w.\-[\]%+*]+=[^&\s]*(?:&[\w.\-[\]%+*]+=[^&\s]*)*$/;

/** A multipart body: each part whose field name is a secret's keeps its headers and loses its content. */
function scrubMultipart(text: string, boundary: string): string {
  const delimiter = `--${boundary}`;
  return text
    .split(delimiter)
    .map((part) => {
      const headerEnd = part.search(/\r?\n\r?\n/);
      if (headerEnd < 0) return scrubText(part);
      const headers = part.slice(0, headerEnd);
      const name = /\bname="([^"]*)"/i.exec(headers)?.[1];
      const separator = /\r?\n\r?\n/.exec(part.slice(headerEnd))![0];
      const content = part.slice(headerEnd + separator.length);
      const trailing = /\r?\n$/.exec(content)?.[0] ?? '';
      const kept = name !== undefined && isSecretName(name) ? REDACTED : scrubText(content.slice(0, content.length - trailing.length));
      return `${scrubText(headers)}${separator}${kept}${trailing}`;
    })
    .join(delimiter);
}

/**
 * A request or response body by its content type (any case), or, with none that says, by its shape:
 * JSON parsed and scrubbed at any depth, forms and multipart field by field, anything else (HTML
 * included) as text.
 */
export function scrubBody(text: string, mimeType = ''): string {
  const type = mimeType.toLowerCase();
  const boundary = /boundary="?([^";]+)"?/i.exec(mimeType)?.[1] ?? /^--([^\r\n]+)\r?\n[^]*content-disposition/i.exec(text)?.[1];
  if (type.includes('multipart/') || (!type.includes('json') && boundary && text.startsWith(`--${boundary}`))) {
    return boundary ? scrubMultipart(text, boundary) : scrubText(text);
  }
  if (type.includes('x-www-form-urlencoded')) return scrubForm(text);
  const json = type.includes('json') || !type || type.includes('text/plain') ? parsedJson(text) : undefined;
  if (json) return JSON.stringify(scrubValue(json.value));
  if (!type.includes('html') && FORM_SHAPE.test(text.trim())) return scrubForm(text);
  return scrubText(text);
}

// ---- HAR entries ----

const scrubPairs = (pairs: unknown) =>
  Array.isArray(pairs)
    ? (pairs as Pair[]).map((pair) => ({
        ...pair,
        name: scrubSecretValues(String(pair.name)),
        value: pairValue(secretValuePattern(), String(pair.name), String(pair.value)),
      }))
    : pairs;
const scrubCookies = (cookies: unknown) =>
  Array.isArray(cookies) ? (cookies as Pair[]).map((cookie) => ({ ...cookie, value: cookieValue(String(cookie.name), String(cookie.value)) })) : cookies;

/** Whether a request asked for a token (its path's last segment names a secret: Magento's `/V1/integration/admin/token`). */
function asksForToken(url: string): boolean {
  try {
    return isSecretName(new URL(url).pathname.split('/').filter(Boolean).at(-1) ?? '');
  } catch {
    return false;
  }
}

/** One HAR 1.2 entry as it may be stored: every part scrubbed, its shape and every other value kept. */
export function scrubHarEntry(entry: Record<string, unknown>): Record<string, unknown> {
  const request = (entry.request ?? {}) as Record<string, unknown>;
  const response = (entry.response ?? {}) as Record<string, unknown>;
  const url = String(request.url ?? '');
  const postData = request.postData as { mimeType?: string; text?: string; params?: unknown } | undefined;
  const content = response.content as { mimeType?: string; text?: string } | undefined;
  let text = content?.text;
  if (text !== undefined) {
    const json = parsedJson(text);
    text = json && typeof json.value === 'string' && asksForToken(url) ? JSON.stringify(REDACTED) : scrubBody(text, content?.mimeType ?? '');
  }
  const scrubbed = {
    ...entry,
    request: {
      ...request,
      url: scrubText(url),
      headers: scrubPairs(request.headers),
      queryString: scrubPairs(request.queryString),
      cookies: scrubCookies(request.cookies),
      ...(postData
        ? {
            postData: {
              ...postData,
              ...(postData.text === undefined ? {} : { text: scrubBody(postData.text, postData.mimeType) }),
              ...(postData.params === undefined ? {} : { params: scrubPairs(postData.params) }),
            },
          }
        : {}),
    },
    response: {
      ...response,
      headers: scrubPairs(response.headers),
      cookies: scrubCookies(response.cookies),
      ...(typeof response.redirectURL === 'string' ? { redirectURL: scrubText(response.redirectURL) } : {}),
      ...(content ? { content: { ...content, ...(text === undefined ? {} : { text }) } } : {}),
    },
  };
  // Anything else (a comment, a page's title, an extension field) holds no known secret value either.
  return scrubSecretValuesIn(scrubbed);
}

/** A file stored beside a trace (a network trace, an evaluator's report): JSON scrubbed as a value, anything else as text. */
export function scrubStoredFile(name: string, text: string): string {
  const json = /\.(json|har)$/i.test(name) ? parsedJson(text) : undefined;
  return json ? JSON.stringify(scrubValue(json.value)) : scrubText(text);
}
