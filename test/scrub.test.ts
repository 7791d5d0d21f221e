/**
 * The scrubber (storage/scrub.ts) on every case of issue 57's first section: secret fields in JSON
 * (at any depth), multipart and form bodies (content type in any case, or none), query strings and
 * fragments in URLs, `queryString`, `Location` and `Referer`, URL credentials, token responses
 * (Magento's bare-string admin token too), and the secret values the process knows (site passwords,
 * API and S3 keys) in any field, page, path or header, as typed or encoded; harmless names stay; a
 * network trace entry over the cap is trimmed, not dropped.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { knownSecretValues, neverStore } from '../config/secrets';
import { MAX_STORED_HAR_BYTES, storedHar } from '../env/evaluators/harnesses/verified/network';
import {
  isSecretName,
  REDACTED,
  REDACTED_IN_URL,
  scrubBody,
  scrubHarEntry,
  scrubSecretValuesIn,
  scrubStoredFile,
  scrubText,
  scrubValue,
} from '../storage/scrub';
import { foundSecret } from './harness/secretForms';
import { serveLeakySite } from './harness/leakySite';
import { launchChromium } from './browser/helpers';
import { NetworkRecorder } from '../env/evaluators/harnesses/verified/network';

/** A site password with every character that encodes differently in a URL, HTML, JSON and base64. */
const SITE_PASSWORD = `Pa&s w<rd>"1/é'+%`;
const API_KEY = 'sk-test-0123456789abcdef';
const S3_SECRET = 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY';
/** A password read through a configured variable that is not named like a secret. */
const CONFIGURED_PASSWORD = 'c0nfigured-pw-4242';
const SECRETS = [SITE_PASSWORD, API_KEY, S3_SECRET, CONFIGURED_PASSWORD];
/** Secret-named values that no configuration knows: only their names can give them away. */
const TOKENS = ['tok-query-11111111', 'tok-api-22222222', 'tok-access-33333333', 'tok-refresh-44444444', 'tok-magento-55555555'];

const assertClean = (stored: unknown, what: string) => {
  const text = typeof stored === 'string' ? stored : JSON.stringify(stored);
  assert.equal(foundSecret(text, [...SECRETS, ...TOKENS, 'hunter2-x']), undefined, `${what} keeps a secret`);
};

describe('the scrubber', () => {
  const saved = { ...process.env };
  before(() => {
    process.env.WEBRL_SHOPPING_PASSWORD = SITE_PASSWORD;
    process.env.WEBRL_LLM_API_KEY = API_KEY;
    process.env.AWS_SECRET_ACCESS_KEY = S3_SECRET;
    neverStore(CONFIGURED_PASSWORD);
  });
  after(() => {
    process.env = saved;
  });

  it('knows the secrets of its environment and the ones it was told, not usernames or short values', () => {
    process.env.WEBRL_SHOPPING_USERNAME = 'emma.lopez@gmail.com';
    process.env.WEBRL_REDDIT_PASSWORD = 'abc';
    const known = knownSecretValues();
    for (const secret of SECRETS) assert.ok(known.includes(secret));
    assert.ok(!known.includes('emma.lopez@gmail.com') && !known.includes('abc'));
  });

  it('names secrets exactly, after folding case and separators, not by substring', () => {
    const secret = ['password', 'Passwd', 'pwd', 'PIN', 'passcode', 'token', 'access_token', 'refreshToken', 'api-key', 'APIKEY', 'X-Api-Key'];
    const more = ['secret', 'client_secret', 'Authorization', 'Cookie', 'Set-Cookie', 'form_key', 'login[password]', 'user.pass', 'PRIVATE-TOKEN'];
    for (const name of [...secret, ...more]) assert.ok(isSecretName(name), name);
    for (const name of ['keyword', 'author', 'passwordHint', 'tokens', 'keys', 'pinned', 'spinner', 'username', 'q', 'pass_count']) {
      assert.ok(!isSecretName(name), name);
    }
  });

  it('replaces secret fields of JSON bodies at any depth, Magento token requests included', () => {
    const body = JSON.stringify({
      password: 'hunter2-x',
      user: { pass: 'hunter2-x', name: 'emma' },
      items: [{ pin: 1234, keyword: 'shoes' }],
      author: 'emma',
      credentials: { api_key: TOKENS[1], passcode: 99 },
    });
    const scrubbed = JSON.parse(scrubBody(body, 'application/json; charset=UTF-8'));
    assert.deepEqual(scrubbed, {
      password: REDACTED,
      user: { pass: REDACTED, name: 'emma' },
      items: [{ pin: REDACTED, keyword: 'shoes' }],
      author: 'emma',
      credentials: { api_key: REDACTED, passcode: REDACTED },
    });
    // Magento's admin token request; the same JSON without a content type, or as text/plain.
    const token = JSON.stringify({ username: 'admin', password: SITE_PASSWORD });
    for (const type of ['application/json', 'APPLICATION/JSON', '', 'text/plain;charset=UTF-8']) {
      assert.deepEqual(JSON.parse(scrubBody(token, type)), { username: 'admin', password: REDACTED }, type);
    }
  });

  it('replaces multipart fields named like secrets, with or without the boundary in the content type', () => {
    const boundary = '----WebKitFormBoundary7MA4YWxk';
    const body = [
      `--${boundary}`,
      'Content-Disposition: form-data; name="title"',
      '',
      'my keyword',
      `--${boundary}`,
      'Content-Disposition: form-data; name="user[password]"',
      '',
      'hunter2-x',
      `--${boundary}`,
      'Content-Disposition: form-data; name="token"',
      '',
      TOKENS[0],
      `--${boundary}--`,
      '',
    ].join('\r\n');
    for (const type of [`multipart/form-data; boundary=${boundary}`, `Multipart/Form-Data; boundary="${boundary}"`, '']) {
      const scrubbed = scrubBody(body, type);
      assertClean(scrubbed, `multipart (${type || 'no type'})`);
      assert.equal(scrubbed, body.replace('hunter2-x', REDACTED).replace(TOKENS[0]!, REDACTED), type);
    }
  });

  it('replaces pwd, pin and passcode form fields whatever the case of the content type, or with none, and keeps every other byte', () => {
    const body = `keyword=red+shoes&author=emma&pwd=hunter2-x&pin=1234&passcode=hunter2-x&login%5Bpassword%5D=hunter2-x&q=a%20b`;
    const expected = `keyword=red+shoes&author=emma&pwd=${REDACTED_IN_URL}&pin=${REDACTED_IN_URL}&passcode=${REDACTED_IN_URL}&login%5Bpassword%5D=${REDACTED_IN_URL}&q=a%20b`;
    for (const type of ['application/x-www-form-urlencoded', 'Application/X-WWW-Form-Urlencoded; charset=UTF-8', '']) {
      assert.equal(scrubBody(body, type), expected, type || 'no content type');
    }
  });

  it('replaces query-string and fragment secrets and URL credentials, in URLs and in free text', () => {
    const url = `http://admin:hunter2-x@shop.test/search?q=keyword&password=hunter2-x&token=${TOKENS[0]}&api_key=${TOKENS[1]}&author=me#access_token=${TOKENS[2]}`;
    const scrubbed = scrubText(url);
    assert.equal(
      scrubbed,
      `http://${REDACTED_IN_URL}@shop.test/search?q=keyword&password=${REDACTED_IN_URL}&token=${REDACTED_IN_URL}&api_key=${REDACTED_IN_URL}&author=me#access_token=${REDACTED_IN_URL}`,
    );
    assert.equal(new URL(scrubbed).searchParams.get('password'), REDACTED, 'the URL still parses');
    assertClean(scrubText(`GET ${url} failed; body {"refresh_token": "${TOKENS[3]}", "keyword": "x"}`), 'a log line');
  });

  it('replaces token responses: access and refresh tokens in JSON, and the bare string Magento answers for a token', () => {
    const entry = (url: string, text: string) =>
      scrubHarEntry({
        request: {
          method: 'POST',
          url,
          headers: [],
          queryString: [],
          postData: { mimeType: 'application/json', text: '{"username":"admin","password":"hunter2-x"}' },
        },
        response: { status: 200, headers: [], content: { mimeType: 'application/json', text } },
      });
    const oauth = entry('http://gitlab.test/oauth/token', JSON.stringify({ access_token: TOKENS[2], refresh_token: TOKENS[3], token_type: 'bearer' }));
    assert.deepEqual(JSON.parse((oauth.response as { content: { text: string } }).content.text), {
      access_token: REDACTED,
      refresh_token: REDACTED,
      token_type: 'bearer',
    });
    for (const path of ['/rest/V1/integration/admin/token', '/rest/default/V1/integration/admin/token', '/rest/V1/integration/customer/token']) {
      const magento = entry(`http://shop.test${path}`, JSON.stringify(TOKENS[4]));
      assert.equal((magento.response as { content: { text: string } }).content.text, JSON.stringify(REDACTED), path);
      assertClean(magento, path);
    }
    // Any other bare string answer stays.
    const other = entry('http://shop.test/rest/V1/products/count', '"42"');
    assert.equal((other.response as { content: { text: string } }).content.text, '"42"');
  });

  it('replaces the secret values it knows anywhere: a harmless field, an HTML page, a URL path, a Referer, encoded in any way', () => {
    const html = (value: string) => value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
    const numeric = [...SITE_PASSWORD].map((c) => `&#x${c.codePointAt(0)!.toString(16)};`).join('');
    const cases = {
      'a form field of a harmless name': `q=${encodeURIComponent(SITE_PASSWORD)}&keyword=x`,
      'the same, form-encoded': new URLSearchParams({ q: SITE_PASSWORD }).toString(),
      'an HTML page': `<p>Search results for: '${html(SITE_PASSWORD)}'</p><p>${numeric}</p><input name="q" value="${html(SITE_PASSWORD)}">`,
      'a URL path': `http://shop.test/users/${encodeURIComponent(SITE_PASSWORD)}/edit`,
      'twice URL-encoded': encodeURIComponent(encodeURIComponent(SITE_PASSWORD)),
      'JSON-escaped': JSON.stringify({ note: `typed ${SITE_PASSWORD}` }),
      'base64 (Basic credentials)': `Basic ${Buffer.from(`admin:${SITE_PASSWORD}`).toString('base64')}`,
      'base64, URL-safe, at each offset': ['', 'a', 'ab'].map((pad) => Buffer.from(pad + S3_SECRET).toString('base64url')).join(' '),
      'an API key in a header': `Bearer ${API_KEY}`,
      'an S3 key in an error': `SignatureDoesNotMatch for ${S3_SECRET}`,
      'a configured password': `typed "${CONFIGURED_PASSWORD}" into [12]`,
    };
    for (const [what, text] of Object.entries(cases)) {
      const scrubbed = scrubText(text);
      assert.ok(scrubbed.includes(REDACTED), `${what}: nothing replaced`);
      assertClean(scrubbed, what);
    }
    const referer = scrubHarEntry({
      request: { method: 'GET', url: 'http://shop.test/', headers: [{ name: 'Referer', value: `http://shop.test/?q=${encodeURIComponent(SITE_PASSWORD)}` }] },
      response: { status: 200, headers: [], content: { mimeType: 'text/html; charset=UTF-8', text: `<b>${html(SITE_PASSWORD)}</b>` } },
    });
    assertClean(referer, 'a Referer and an HTML body');
  });

  it('scrubs trajectory rows and records deeply, and the artifact store keeps known values out of any JSON', () => {
    const row = {
      url: `http://shop.test/?token=${TOKENS[0]}`,
      html: `[12] textbox 'Password' value: ${SITE_PASSWORD}`,
      response: `type [12] [${SITE_PASSWORD}]`,
      action: { kind: 'type', text: SITE_PASSWORD },
      evaluation: { status: 'success', request: { password: 'hunter2-x', headers: [{ name: 'X-CSRF-Token', value: TOKENS[0] }] } },
      screenshot: 'campaigns/c/phase-0/traces/1/step-0.png',
      rounds: [{ state: { observation: `<input name="api_key" value="${TOKENS[1]}">` }, response: 'stop [done]' }],
      score: 1,
    };
    const scrubbed = scrubValue(row);
    assertClean(scrubbed, 'a trace row');
    assert.equal(scrubbed.screenshot, row.screenshot);
    assert.equal(scrubbed.score, 1);
    assertClean(scrubSecretValuesIn({ [SITE_PASSWORD]: [API_KEY, { nested: `x ${S3_SECRET} y` }] }), 'a stored object');
    assert.deepEqual(scrubSecretValuesIn({ keyword: 'shoes', n: [1, null, true] }), { keyword: 'shoes', n: [1, null, true] });
  });

  it('stores a network trace with every secret header, cookie and field scrubbed, its shape kept', () => {
    const entry = {
      startedDateTime: new Date(1).toISOString(),
      time: 3,
      request: {
        method: 'POST',
        url: `http://shop.test/customer/account/loginPost/?token=${TOKENS[0]}`,
        httpVersion: 'HTTP/1.1',
        headers: [
          { name: 'Cookie', value: 'PHPSESSID=hunter2-x; mage-messages=%5B%5D' },
          { name: 'Referer', value: `http://shop.test/?api_key=${TOKENS[1]}` },
          { name: 'Authorization', value: `Bearer ${API_KEY}` },
          { name: 'Content-Type', value: 'APPLICATION/X-WWW-FORM-URLENCODED' },
        ],
        queryString: [
          { name: 'token', value: TOKENS[0] },
          { name: 'keyword', value: 'shoes' },
        ],
        cookies: [{ name: 'PHPSESSID', value: 'hunter2-x' }],
        postData: {
          mimeType: 'APPLICATION/X-WWW-FORM-URLENCODED',
          text: `form_key=abc&login%5Busername%5D=emma&login%5Bpassword%5D=${encodeURIComponent(SITE_PASSWORD)}`,
        },
      },
      response: {
        status: 302,
        statusText: 'Found',
        httpVersion: 'HTTP/1.1',
        headers: [
          { name: 'Set-Cookie', value: 'PHPSESSID=hunter2-x; path=/\nmage-messages=added; path=/' },
          { name: 'Location', value: `http://shop.test/callback?access_token=${TOKENS[2]}&next=%2F` },
        ],
        cookies: [
          { name: 'PHPSESSID', value: 'hunter2-x' },
          { name: 'mage-messages', value: 'added' },
        ],
        redirectURL: `http://shop.test/callback?access_token=${TOKENS[2]}&next=%2F`,
        content: { size: -1, mimeType: '' },
      },
    };
    const har = JSON.parse(storedHar([entry])) as { log: { entries: (typeof entry)[]; comment?: string } };
    const stored = har.log.entries[0]!;
    assertClean(har, 'the stored network trace');
    assert.deepEqual(
      stored.request.headers.map((h) => h.name),
      entry.request.headers.map((h) => h.name),
    );
    // Every cookie's value goes, bar the flash messages the evaluator reads.
    assert.deepEqual(stored.request.headers[0], { name: 'Cookie', value: `PHPSESSID=${REDACTED}; mage-messages=%5B%5D` });
    assert.deepEqual(stored.response.headers[0], { name: 'Set-Cookie', value: `PHPSESSID=${REDACTED}; path=/\nmage-messages=added; path=/` });
    assert.deepEqual(stored.response.cookies, [
      { name: 'PHPSESSID', value: REDACTED },
      { name: 'mage-messages', value: 'added' },
    ]);
    assert.deepEqual(stored.request.queryString, [
      { name: 'token', value: REDACTED },
      { name: 'keyword', value: 'shoes' },
    ]);
    assert.deepEqual(stored.request.cookies, [{ name: 'PHPSESSID', value: REDACTED }]);
    assert.equal(stored.request.postData.text, `form_key=${REDACTED_IN_URL}&login%5Busername%5D=emma&login%5Bpassword%5D=${REDACTED_IN_URL}`);
    assert.equal(stored.response.redirectURL, `http://shop.test/callback?access_token=${REDACTED_IN_URL}&next=%2F`);
    assert.deepEqual([stored.request.method, stored.response.status, stored.startedDateTime, stored.time], ['POST', 302, entry.startedDateTime, 3]);
    assert.equal(har.log.comment, undefined);
  });

  it('over its cap, drops the bodies, trims an entry too large for it, then drops the latest entries, and says so', () => {
    const entry = (i: number, body: string, post = 'qty=2') => ({
      startedDateTime: new Date(i).toISOString(),
      request: {
        method: 'POST',
        url: `http://shop.test/cart/${i}`,
        headers: [],
        queryString: [],
        postData: { mimeType: 'application/x-www-form-urlencoded', text: post },
      },
      response: { status: 200, headers: [], content: { size: body.length, mimeType: 'text/html', text: body } },
    });
    const big = Array.from({ length: 50 }, (_, i) => entry(i, 'y'.repeat(1000)));
    const bodiesOnly = JSON.parse(storedHar(big, 30_000)) as { log: { entries: unknown[]; comment: string } };
    assert.equal(bodiesOnly.log.entries.length, 50);
    assert.match(bodiesOnly.log.comment, /response bodies dropped, 50 of 50 entries kept/);
    const cut = storedHar(big, 6_000);
    assert.ok(Buffer.byteLength(cut) <= 6_000);
    const parsed = JSON.parse(cut) as { log: { entries: unknown[]; comment: string } };
    assert.ok(parsed.log.entries.length < 50);
    assert.match(parsed.log.comment, new RegExp(`cut to 6000 bytes: .*${parsed.log.entries.length} of 50 entries kept`));
    // One entry alone over the cap (a large upload) is kept, its long value cut.
    const [single] = [storedHar([entry(1, 'x', `file=${'z'.repeat(50_000)}`)], 20_000)];
    const one = JSON.parse(single!) as { log: { entries: ReturnType<typeof entry>[]; comment: string } };
    assert.ok(Buffer.byteLength(single!) <= 20_000);
    assert.equal(one.log.entries.length, 1);
    assert.equal(one.log.entries[0]!.request.url, 'http://shop.test/cart/1');
    assert.match(one.log.entries[0]!.request.postData.text, /^file=z+\[\.\.\. \d+ characters cut\]$/);
    assert.match(one.log.comment, /long values of large entries cut, 1 of 1 entries kept/);
    assert.ok(MAX_STORED_HAR_BYTES >= 1024 * 1024);
  });

  it("stores a real browser's trace of a page that sends every kind of secret without any of them, every request kept", async () => {
    const leaky = await serveLeakySite(SITE_PASSWORD, S3_SECRET);
    const browser = await launchChromium();
    try {
      const context = await browser.newContext();
      const recorder = new NetworkRecorder(context);
      const page = await context.newPage();
      await page.goto(`${leaky.url}/leak`);
      await page.waitForFunction(() => document.getElementById('answer')?.textContent === 'The answer is 42');
      const entries = await recorder.stop();
      const secrets = [SITE_PASSWORD, S3_SECRET, ...leaky.tokens];
      assert.ok(foundSecret(JSON.stringify(entries), secrets), 'the page sent no secret');
      // As an episode stores it: the HAR built, then the file scrubbed with everything else it stores.
      const stored = scrubStoredFile('network.har', storedHar(entries));
      assert.equal(foundSecret(stored, secrets), undefined);
      for (const path of leaky.paths) assert.ok(stored.includes(`${leaky.url}${path}`), `no request to ${path} stored`);
    } finally {
      await browser.close();
      leaky.close();
    }
  });
});
