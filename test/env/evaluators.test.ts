import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DeterministicJudge, LlmJudge } from '../../env/evaluators/judge';
import { parseHelperCall, checkHelperCall, redditPostUrl } from '../../env/evaluators/helpers';
import { exactMatch, mustExclude, mustInclude, normalizeAnswer, tokenize } from '../../env/evaluators/text-match';

describe('string normalisation and matching (WebArena-Lite semantics)', () => {
  test('strips one pair of surrounding quotes and lower-cases, without trimming', () => {
    assert.equal(normalizeAnswer('"Hello World"'), 'hello world');
    assert.equal(normalizeAnswer("'x'"), 'x');
    assert.equal(normalizeAnswer('""a""'), '"a"');
    assert.equal(normalizeAnswer(' Canceled'), ' canceled');
    assert.ok(exactMatch('N/A', '"n/a"'));
    assert.ok(!exactMatch('Canceled', 'Canceled '));
  });

  test('a single-token reference must equal a whole token of the answer', () => {
    assert.ok(mustInclude('2', 'There are 2 orders'));
    assert.ok(!mustInclude('2', 'There are 12 orders'));
    assert.ok(mustInclude('27.00', 'The price is $27.00.'));
    assert.ok(mustInclude('guest', '<td><span>Guest</span></td>'));
    assert.ok(!mustInclude('Guest', 'Guesthouse'));
  });

  test('tokens with slashes also split on slashes; multi-token references match as substrings', () => {
    assert.ok(tokenize('see /byteblaze/dotfiles now').includes('dotfiles'));
    assert.ok(mustInclude('awesome_llm_reading', '<a href="/byteblaze/awesome_llm_reading">'));
    assert.ok(mustInclude('N/A', 'The answer is N/A'));
    assert.ok(mustInclude('Impulse Duffle', 'top sellers: impulse duffle, overnight duffle'));
    assert.ok(!mustInclude('Impulse Duffle', 'impulse-duffle'));
  });

  test('|OR| alternatives: any one suffices', () => {
    assert.ok(mustInclude('65 |OR| 3', 'I found 3 of them'));
    assert.ok(!mustInclude('65 |OR| 3', 'I found 4 of them'));
  });

  test('must_exclude is the negation with the same token rule', () => {
    assert.ok(mustExclude('0', 'there are 10'));
    assert.ok(!mustExclude('0', 'there are 0'));
  });
});

describe('helper calls', () => {
  test('parses names, string literals and __page__', () => {
    assert.deepEqual(parseHelperCall("gitlab_get_project_memeber_role(__page__, 'vinta')"), {
      name: 'gitlab_get_project_memeber_role',
      args: [{ kind: 'page' }, { kind: 'string', value: 'vinta' }],
    });
    assert.deepEqual(parseHelperCall('shopping_get_latest_order_url()'), { name: 'shopping_get_latest_order_url', args: [] });
  });

  test('rejects unknown helpers and wrong arguments clearly', () => {
    assert.throws(() => checkHelperCall(parseHelperCall("no_such_helper('x')"), 'url'), /unknown url helper "no_such_helper"/);
    assert.throws(() => checkHelperCall(parseHelperCall('reddit_get_post_url()'), 'url'), /takes \(string\)/);
    assert.throws(() => checkHelperCall(parseHelperCall("reddit_get_post_url('x')"), 'locator'), /unknown locator helper/);
  });

  test('reddit_get_post_url cuts a comment or slug URL down to the post', () => {
    assert.equal(redditPostUrl('http://h:9999/f/books/123/some-title#comment_4'), 'http://h:9999/f/books/123/');
    assert.equal(redditPostUrl('http://h:9999/f/books'), 'http://h:9999/f/books');
    assert.equal(redditPostUrl('http://h:9999/user/x'), 'http://h:9999/user/x');
  });
});

describe('deterministic judge (embedded default)', () => {
  const judge = new DeterministicJudge();
  test('every reference item must occur, ignoring case, punctuation and spacing', async () => {
    assert.equal(await judge.matches({ intent: '', reference: ['refund', '000000180', 'broke after three days'], answer: 'Please REFUND order #000000180: it broke after three days.' }), true);
    assert.equal(await judge.matches({ intent: '', reference: ['refund', '000000180'], answer: 'Please refund order 000000181' }), false);
  });
  test('unachievable reports must say the task cannot be done', async () => {
    assert.equal(await judge.sameUnachievableReason({ intent: '', reason: 'no such review', answer: 'There is no such review, so it cannot be done' }), true);
    assert.equal(await judge.sameUnachievableReason({ intent: '', reason: 'no such review', answer: 'The review says it is great' }), false);
  });
});

describe('LLM judge over an OpenAI-compatible chat endpoint', () => {
  let server: Server;
  let baseURL = '';
  const requests: { model: string; messages: { role: string; content: string }[] }[] = [];
  before(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        const parsed = JSON.parse(body) as (typeof requests)[number];
        requests.push(parsed);
        const user = parsed.messages.find((m) => m.role === 'user')?.content ?? '';
        const verdict = user.includes('known reason') ? (user.includes('reported reason: closed') ? 'same' : 'different') : user.includes('student answer: 42') ? 'The answer is correct.' : 'This is incorrect.';
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ id: 'x', object: 'chat.completion', created: 0, model: parsed.model, choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: verdict } }] }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  test('asks the chat endpoint and reads correct / incorrect / same / different', async () => {
    const judge = new LlmJudge({ model: 'judge-model', baseURL, apiKey: 'test' });
    assert.equal(await judge.matches({ intent: 'What is the answer?', reference: ['42'], answer: '42' }), true);
    assert.equal(await judge.matches({ intent: 'What is the answer?', reference: ['42'], answer: '41' }), false);
    assert.equal(await judge.sameUnachievableReason({ intent: 'Book it', reason: 'the shop is closed', answer: 'closed' }), true);
    assert.equal(await judge.sameUnachievableReason({ intent: 'Book it', reason: 'the shop is closed', answer: 'no idea' }), false);
    assert.equal(requests[0]?.model, 'judge-model');
    assert.match(requests[0]?.messages.find((m) => m.role === 'user')?.content ?? '', /reference answer: 42/);
  });
});
