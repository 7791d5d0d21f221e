import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfig } from '../../config/load';
import { Secret } from '../../config/secrets';
import { createJudge, DeterministicJudge, JudgeReplyError, LlmJudge } from '../../env/evaluators/judge';
import { parseHelperCall, checkHelperCall, redditPostUrl } from '../../env/evaluators/helpers';
import { pythonStr } from '../../env/evaluators/pageValues';
import {
  exactMatch,
  mustExclude,
  mustInclude,
  normalizeAnswer,
  tokenize,
  webArenaClean,
  webArenaExactMatch,
  webArenaMustInclude,
} from '../../env/evaluators/textMatch';
import { parseQs, urlMatches, urlparse } from '../../env/evaluators/urlMatch';
import { startJudgeServer, type JudgeServer } from '../harness/judgeServer';

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
    assert.equal(
      await judge.matches({
        intent: '',
        reference: ['refund', '000000180', 'broke after three days'],
        answer: 'Please REFUND order #000000180: it broke after three days.',
      }),
      true,
    );
    assert.equal(await judge.matches({ intent: '', reference: ['refund', '000000180'], answer: 'Please refund order 000000181' }), false);
  });
  test('unachievable reports must say the task cannot be done', async () => {
    assert.equal(await judge.sameUnachievableReason({ intent: '', reason: 'no such review', answer: 'There is no such review, so it cannot be done' }), true);
    assert.equal(await judge.sameUnachievableReason({ intent: '', reason: 'no such review', answer: 'The review says it is great' }), false);
  });
});

describe('LLM judge over an OpenAI-compatible chat endpoint', () => {
  let server: JudgeServer;
  before(async () => {
    server = await startJudgeServer();
  });
  after(() => server.close());

  test("asks in WebArena's prompt format and reads correct / incorrect / partially correct / same / different", async () => {
    const judge = new LlmJudge({ model: 'judge-model', baseURL: server.baseURL, maxAttempts: 1 });
    assert.equal(judge.kind, 'llm');
    assert.equal(await judge.matches({ intent: 'What is the answer?', reference: ['42'], answer: '42' }), true);
    assert.equal(await judge.matches({ intent: 'What is the answer?', reference: ['42'], answer: '41' }), false);
    assert.equal(await judge.matches({ intent: 'Who?', reference: ['Emma Lopez'], answer: 'emma' }), false, 'partially correct fails');
    assert.equal(await judge.sameUnachievableReason({ intent: 'Book it', reason: 'the shop is closed', answer: 'it is closed today' }), true);
    assert.equal(await judge.sameUnachievableReason({ intent: 'Book it', reason: 'the shop is closed', answer: 'no idea' }), false);
    const first = server.bodies()[0]!;
    assert.equal(first.model, 'judge-model');
    assert.equal(first.temperature, 0);
    assert.equal(first.max_completion_tokens, 768, 'max_completion_tokens, which reasoning models take (not max_tokens)');
    assert.equal((first as { max_tokens?: number }).max_tokens, undefined);
    const user = first.messages.find((m) => m.role === 'user')?.content ?? '';
    assert.match(user, /^question: What is the answer\?$/m);
    assert.match(user, /^reference answer: 42$/m);
    assert.match(user, /^student answer: 42$/m);
    assert.match(user, /correct, incorrect or partially correct/);
    assert.match(server.bodies()[3]!.messages.find((m) => m.role === 'user')?.content ?? '', /^actual unachievable reason: the shop is closed$/m);
  });

  test('a reply without a verdict is an error, not a silent fail', async () => {
    const judge = new LlmJudge({ model: 'judge-model', baseURL: server.baseURL, maxAttempts: 1 });
    await assert.rejects(judge.matches({ intent: 'q', reference: ['x'], answer: 'GARBLE' }), JudgeReplyError);
    await assert.rejects(judge.sameUnachievableReason({ intent: 'q', reason: 'r', answer: 'garble' }), /no verdict \(same \/ different\)/);
  });

  test('models.judge picks the judge: absent or embedded is deterministic, chat is the LLM judge with the key from the environment', () => {
    assert.equal(createJudge(undefined).kind, 'deterministic');
    assert.equal(createJudge({ backend: 'embedded' }).kind, 'deterministic');
    const models = parseConfig({ models: { judge: { backend: 'chat', baseUrl: server.baseURL, model: 'judge-model' } } }).models;
    const judge = createJudge(models.judge, { llmApiKey: new Secret('sk-test') });
    assert.ok(judge instanceof LlmJudge);
    assert.equal(judge.describe(), `${server.baseURL} (model judge-model)`);
    assert.throws(
      () => parseConfig({ models: { judge: { backend: 'chat', baseUrl: server.baseURL, model: 'm', apiKey: 'sk' } } }),
      /models\.judge\.apiKey: secrets are not accepted/,
    );
  });
});

describe("WebArena's own comparisons (the original harness)", () => {
  test('answers are trimmed before quotes are removed; exact_match compares the cleaned forms', () => {
    assert.equal(webArenaClean('  "Yes" '), 'yes');
    assert.ok(webArenaExactMatch('yes', ' Yes\n'));
    assert.ok(!exactMatch('yes', ' Yes\n'), 'Lite does not trim');
  });

  test('must_include is a substring test, whole-token only for a lone one-character item', () => {
    assert.ok(!webArenaMustInclude('2', 'there are 12', true));
    assert.ok(webArenaMustInclude('2', 'there are 2 of them', true));
    assert.ok(webArenaMustInclude('2', 'there are 12', false), 'an item among several is a plain substring');
    assert.ok(webArenaMustInclude('10', 'there are 110', true), 'a longer reference is a plain substring');
    assert.ok(!webArenaMustInclude('65 |OR| 3', '3', true), 'no |OR| for answers: the item is literal');
  });

  test("urlparse and parse_qs split URLs as Python's urllib does", () => {
    assert.deepEqual(urlparse('http://Host:9999/a/b;p?x=1#frag'), {
      scheme: 'http',
      netloc: 'Host:9999',
      path: '/a/b',
      params: 'p',
      query: 'x=1',
      fragment: 'frag',
    });
    assert.deepEqual(
      [...parseQs('q=usb+wifi&empty=&flag&label_name%5B%5D=type%3A%20bug%20%F0%9F%90%9E&q=two')],
      [
        ['q', ['usb wifi', 'two']],
        ['label_name[]', ['type: bug 🐞']],
      ],
    );
  });

  test('url_match GOLD in PRED: base path contained, each reference query key satisfied in any order, |OR| alternatives', () => {
    const ref = 'http://h/catalogsearch/result/index/?product_list_order=price&q=chairs&product_list_dir=asc';
    assert.ok(urlMatches('webarena', ref, undefined, 'http://h/catalogsearch/result/index/?q=chairs&product_list_dir=asc&product_list_order=price&p=2'));
    assert.ok(!urlMatches('webarena', ref, undefined, 'http://h/catalogsearch/result/index/?q=chairs&product_list_order=price'));
    assert.ok(
      !urlMatches('webarena-lite', ref, 'GOLD in PRED', 'http://h/catalogsearch/result/index/?q=chairs&product_list_dir=asc&product_list_order=price'),
      'Lite wants the literal string',
    );
    assert.ok(urlMatches('webarena', 'http://h/f/deeplearning |OR| http://h/f/MachineLearning', 'GOLD in PRED', 'http://h/f/MachineLearning/new'));
    assert.ok(!urlMatches('webarena', 'http://h/f/deeplearning |OR| http://h/f/MachineLearning', 'GOLD in PRED', 'http://h/f/books'));
    assert.ok(urlMatches('webarena', 'http://h/x/', undefined, 'http://h/x//'), 'trailing slashes all go');
    assert.ok(urlMatches('webarena-lite', 'http://localhost:1/x', 'EXACT', 'http://127.0.0.1:1/x/'));
  });

  test("page values read as Python's str() prints them", () => {
    assert.equal(pythonStr(null), 'None');
    assert.equal(pythonStr(true), 'True');
    assert.equal(pythonStr(3), '3');
    assert.equal(pythonStr(2.5), '2.5');
    assert.equal(pythonStr(['a', "it's", 1, false]), `['a', "it's", 1, False]`);
    assert.equal(pythonStr({ k: 'v' }), "{'k': 'v'}");
  });
});
