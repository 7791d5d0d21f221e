/**
 * The chat-endpoint backends against a local server speaking OpenAI's chat.completion shape: the LLM
 * ORM reading P(YES) from top log-probs, task generation and the feasibility filter, with garbage,
 * failing and slow replies recorded as failures (generation, feasibility) or clear errors (ORM).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import type { ModelState } from '../../models/state';
import { createChatOrm, ORM_SYSTEM_PROMPT, ormUserTurn } from '../../models/remote/chatOrm';
import { judgeFeasibility } from '../../models/remote/feasibility';
import { RemoteModelError } from '../../models/remote/retry';
import { generateTasksWithLlm } from '../../models/remote/taskGeneration';
import { render } from './fixtures/shop';
import { chatCompletion, startServer, type RecordedRequest, type Reply, type TestServer } from './fixtures/servers';

let server: TestServer;
let behaviour: (request: RecordedRequest) => Reply;

before(async () => {
  server = await startServer((request) => behaviour(request));
});

after(async () => {
  await server.close();
});

const endpoint = () => ({ baseURL: `${server.url}/v1`, model: 'judge', retryDelayMs: 1, maxAttempts: 3 });
const messagesOf = (request: RecordedRequest) => (request.body as { messages: { role: string; content: string }[] }).messages;

const finalState: ModelState = {
  intent: 'Add Blue Kettle to the cart',
  history: [
    { response: 'do(action="Search", argument="Blue Kettle", element="0")', action: { kind: 'Search', element: 0, argument: 'Blue Kettle' } },
    {
      response: '# Element: the add button\ndo(action="Click", element="3")',
      action: { kind: 'Click', element: 3 },
      target: { tag: 'button', label: 'Add to Cart', nth: 1, of: 1, url: 'http://shop.test/product/blue-kettle?ref=search' },
    },
    { response: 'exit(message="")', action: { kind: 'exit', message: '' } },
  ],
  observation: render({ kind: 'product', slug: 'blue-kettle', added: true }),
};

describe('chat ORM', () => {
  test('P(YES) from the top log-probs, over the webrl.md §4 input', async () => {
    behaviour = () => ({
      json: chatCompletion('YES', 'judge', [
        { token: 'YES', logprob: Math.log(0.6) },
        { token: ' Yes', logprob: Math.log(0.1) },
        { token: 'NO', logprob: Math.log(0.2) },
        { token: 'Maybe', logprob: Math.log(0.1) },
      ]),
    });
    const start = server.requests.length;
    const [verdict] = await createChatOrm(endpoint()).judge([finalState]);
    assert.ok(Math.abs(verdict!.pYes - 0.7 / 0.9) < 1e-9);
    assert.equal(verdict!.reward, 1);
    const request = server.requests[start]!;
    assert.equal(request.url, '/v1/chat/completions');
    const body = request.body as Record<string, unknown>;
    assert.deepEqual([body.logprobs, body.top_logprobs, body.max_completion_tokens, body.max_tokens], [true, 20, 1, undefined]);
    const [system, user] = messagesOf(request);
    assert.equal(system!.content, ORM_SYSTEM_PROMPT);
    assert.ok(
      user!.content.startsWith(
        'The User Intent:\nAdd Blue Kettle to the cart\n\nAction History:\ndo(action="Search", argument="Blue Kettle", element="0")\n# Element: the add button; do(action="Click", element="3")\nexit(message="")\n\nThe Current Screenshot:\n<html>',
      ),
    );
  });

  test("an activity's long-lived signal keeps no listener per request (the client's is put on a child)", async () => {
    behaviour = () => ({ json: chatCompletion('YES', 'judge', [{ token: 'YES', logprob: 0 }]) });
    const activity = new AbortController();
    const verdicts = await createChatOrm({ ...endpoint(), signal: activity.signal }).judge(Array.from({ length: 12 }, () => finalState));
    assert.equal(verdicts.length, 12);
    assert.equal(getEventListeners(activity.signal, 'abort').length, 0);
  });

  test("the system text and user turn are WebRL's (process_data.py build_rm_data), on a recorded trajectory", () => {
    // Expected strings written out by hand from build_rm_data's rules: intent and final page
    // stripped, each response's lines joined with '; ' then stripped, one '\n' after every action
    // line, one blank line before the page.
    assert.equal(
      ORM_SYSTEM_PROMPT,
      "You are an expert in evaluating the performance of a website navigation agent. The agent is designed to help a human user navigate the website to complete a task. Given the user\u2019s intent, the agent's action history, and the final state of the screen, your goal is to decide whether the agent\u2019s execution is successful or not. You must respond with YES or NO.",
    );
    const recorded: ModelState = {
      intent: '  What is the top-1 best selling product in 2022?\n',
      history: [
        { response: '# Element: the Reports menu\ndo(action="Click", element="12")', action: { kind: 'Click', element: 12 } },
        { response: '\n# Note: scroll to the table \ndo(action="Scroll Down")\n', action: { kind: 'Scroll Down' } },
        { response: 'exit(message="Quest Lumaflex Band")', action: { kind: 'exit', message: 'Quest Lumaflex Band' } },
      ],
      observation: { ...finalState.observation, html: ' <html data-bbox="0,0,1280,720"> <body> Bestsellers </body> </html>\n' },
    };
    assert.equal(
      ormUserTurn(recorded),
      'The User Intent:\nWhat is the top-1 best selling product in 2022?\n\nAction History:\n' +
        '# Element: the Reports menu; do(action="Click", element="12")\n' +
        '; # Note: scroll to the table ; do(action="Scroll Down");\n' +
        'exit(message="Quest Lumaflex Band")\n' +
        '\nThe Current Screenshot:\n<html data-bbox="0,0,1280,720"> <body> Bestsellers </body> </html>',
    );
    assert.equal(
      ormUserTurn({ ...recorded, history: [] }),
      'The User Intent:\nWhat is the top-1 best selling product in 2022?\n\nAction History:\n\nThe Current Screenshot:\n<html data-bbox="0,0,1280,720"> <body> Bestsellers </body> </html>',
    );
  });

  test("with actionTargets, each element action's line says what it acted on", () => {
    assert.match(
      ormUserTurn(finalState, { actionTargets: true }),
      /\n# Element: the add button; do\(action="Click", element="3"\) \[button "Add to Cart" on \/product\/blue-kettle\?ref=search\]\nexit/,
    );
    assert.doesNotMatch(ormUserTurn(finalState), /\[button "Add to Cart"/);
  });

  test("an answer's first token counts when the tokenizer splits it (SmolLM2: YES is Y + ES)", async () => {
    behaviour = () => ({
      json: chatCompletion('Y', 'judge', [
        { token: 'Y', logprob: Math.log(0.5) },
        { token: 'NO', logprob: Math.log(0.3) },
        { token: 'N', logprob: Math.log(0.1) },
        { token: 'Maybe', logprob: Math.log(0.1) },
      ]),
    });
    const [verdict] = await createChatOrm(endpoint()).judge([finalState]);
    assert.ok(Math.abs(verdict!.pYes - 0.5 / 0.9) < 1e-9);
  });

  test('NO-only top tokens give P(YES) = 0; a reply without YES/NO is retried, then fails clearly', async () => {
    behaviour = () => ({ json: chatCompletion('NO', 'judge', [{ token: 'NO', logprob: -0.01 }]) });
    assert.deepEqual(await createChatOrm(endpoint()).judge([finalState]), [{ pYes: 0, reward: 0 }]);
    behaviour = () => ({ json: chatCompletion('Perhaps', 'judge', [{ token: 'Perhaps', logprob: -0.01 }]) });
    const before = server.requests.length;
    await assert.rejects(
      createChatOrm(endpoint()).judge([finalState]),
      (error: unknown) => error instanceof RemoteModelError && /3 attempt\(s\): neither YES nor NO/.test(error.message),
    );
    assert.equal(server.requests.length - before, 3);
  });

  test('a server error then a good reply succeeds; a hanging server times out', async () => {
    let calls = 0;
    behaviour = () => (calls++ === 0 ? { status: 503, text: 'overloaded' } : { json: chatCompletion('YES', 'judge', [{ token: 'YES', logprob: 0 }]) });
    assert.equal((await createChatOrm(endpoint()).judge([finalState]))[0]!.pYes, 1);
    behaviour = () => 'hang';
    await assert.rejects(createChatOrm({ ...endpoint(), timeoutMs: 150, maxAttempts: 2 }).judge([finalState]), /2 attempt\(s\): .*timed out/i);
  });
});

const seeds = [
  { task_id: 21, intent: 'What is the price of the cheapest kettle?', start_url: '__SHOPPING__' },
  { task_id: 22, intent: 'Add a yoga mat to my cart', start_url: '__SHOPPING__/yoga.html' },
];

describe('task generation', () => {
  test('keeps valid new tasks in WebArena format and records every bad item and bad turn', async () => {
    const replies = [
      'Here you go:\n```json\n' +
        JSON.stringify([
          {
            intent: 'How many reviews does the Blue Kettle have?',
            start_url: '__SHOPPING__',
            eval: { eval_types: ['string_match'], reference_answers: { must_include: ['12'] } },
          },
          { intent: 'Add a yoga mat to my cart', start_url: '__SHOPPING__' },
          { intent: 'Open the order history page', start_url: 'http://evil.example/' },
          { start_url: '__SHOPPING__' },
          { intent: 'Find the newest headphones and add them to the wish list', start_url: '__SHOPPING__/electronics.html', eval: { eval_types: ['bogus'] } },
        ]) +
        '\n```',
      'Sorry, I cannot help with that.',
    ];
    let turn = 0;
    behaviour = () => ({ json: chatCompletion(replies[turn++] ?? '[]', 'generator') });
    const start = server.requests.length;
    const result = await generateTasksWithLlm([{ site: 'shopping', seeds }], { ...endpoint(), idPrefix: 'p3', tasksPerTurn: 5, seed: 9 });
    assert.deepEqual(
      result.tasks.map((task) => [task.task_id, task.intent, task.start_url, task.sites, task.eval?.eval_types]),
      [
        ['p3-shopping-t1-0', 'How many reviews does the Blue Kettle have?', '__SHOPPING__', ['shopping'], ['string_match']],
        ['p3-shopping-t1-1', 'Find the newest headphones and add them to the wish list', '__SHOPPING__/electronics.html', ['shopping'], undefined],
      ],
    );
    assert.deepEqual(
      result.failures.map((failure) => [failure.turn, failure.reason.replace(/:.*$/s, '')]),
      [
        [1, 'item 1'],
        [1, 'item 2'],
        [1, 'item 3'],
        [2, 'no JSON array or object in the reply'],
      ],
    );
    assert.match(result.failures[0]!.reason, /repeats an existing task/);
    assert.match(result.failures[1]!.reason, /not on shopping/);
    assert.equal(result.failures[3]!.raw, 'Sorry, I cannot help with that.');
    const [first, second] = server.requests.slice(start).map(messagesOf);
    assert.match(first![1]!.content, /Write 5 NEW tasks/);
    assert.match(first![1]!.content, /What is the price of the cheapest kettle\?/);
    assert.match(second![1]!.content, /already proposed[\s\S]*How many reviews does the Blue Kettle have\?/);
    assert.equal((server.requests[start]!.body as { seed?: number }).seed, 9);
  });

  test('a hanging endpoint times out and is recorded, not thrown', async () => {
    behaviour = () => 'hang';
    const result = await generateTasksWithLlm([{ site: 'gitlab', seeds: [{ intent: 'Star the kanban-lite project', start_url: '__GITLAB__' }] }], {
      ...endpoint(),
      idPrefix: 'p2',
      turns: 1,
      timeoutMs: 150,
      maxAttempts: 2,
    });
    assert.deepEqual(result.tasks, []);
    assert.match(result.failures[0]!.reason, /failed after 2 attempt\(s\): .*timed out/i);
  });

  test('an endpoint that keeps failing is recorded per turn, not thrown', async () => {
    behaviour = () => ({ status: 500, text: 'boom' });
    const result = await generateTasksWithLlm([{ site: 'reddit', seeds: [{ intent: 'Upvote the newest post in the books forum', start_url: '__REDDIT__' }] }], {
      ...endpoint(),
      idPrefix: 'p1',
      maxAttempts: 2,
    });
    assert.deepEqual(result.tasks, []);
    assert.deepEqual(
      result.failures.map((failure) => [failure.site, failure.turn]),
      [
        ['reddit', 1],
        ['reddit', 2],
      ],
    );
    assert.match(result.failures[0]!.reason, /failed after 2 attempt\(s\): .*500/);
  });
});

describe('feasibility filter', () => {
  const tasks = [
    { task_id: 'a', intent: 'Pay for my order with my Visa card', sites: ['shopping'] },
    { task_id: 'b', intent: 'Show my last order', sites: ['shopping'] },
    { task_id: 'c', intent: 'Sort reviews by rating', sites: ['shopping'] },
    { task_id: 'd', intent: 'Close issue 12', sites: ['gitlab'] },
  ];

  test('keeps feasible tasks, drops infeasible ones, records omitted and garbled verdicts as unjudged', async () => {
    behaviour = (request) => {
      const user = messagesOf(request)[1]!.content;
      if (user.startsWith('Website: gitlab')) return { json: chatCompletion('I think they are all fine!', 'judge') };
      return {
        json: chatCompletion(
          JSON.stringify([
            { task_id: 'a', feasible: false, reason: 'real payment' },
            { task_id: 'b', feasible: true, reason: 'order history exists' },
            { task_id: 'zzz', feasible: true },
          ]),
          'judge',
        ),
      };
    };
    const start = server.requests.length;
    const result = await judgeFeasibility(tasks, { ...endpoint(), batchSize: 5 });
    assert.deepEqual(
      result.kept.map((t) => t.task_id),
      ['b'],
    );
    assert.deepEqual(
      result.dropped.map((t) => t.task_id),
      ['a'],
    );
    assert.deepEqual(
      result.unjudged.map((t) => t.task_id),
      ['c', 'd'],
    );
    assert.deepEqual(result.failures.map((f) => [f.site, f.task_ids]).sort(), [
      ['gitlab', ['d']],
      ['shopping', ['c']],
    ]);
    const shoppingPrompt = server.requests
      .slice(start)
      .map((r) => messagesOf(r)[1]!.content)
      .find((c) => c.startsWith('Website: shopping'))!;
    assert.match(shoppingPrompt, /cannot support:\n- paying with a real card/);
    const kept = await judgeFeasibility(tasks.slice(2), { ...endpoint(), keepUnjudged: true });
    assert.deepEqual(
      kept.kept.map((t) => t.task_id),
      ['c', 'd'],
    );
  });

  test('a hanging endpoint leaves its tasks unjudged with a recorded failure', async () => {
    behaviour = () => 'hang';
    const result = await judgeFeasibility(tasks.slice(0, 2), { ...endpoint(), timeoutMs: 150, maxAttempts: 2 });
    assert.deepEqual(
      result.unjudged.map((t) => t.task_id),
      ['a', 'b'],
    );
    assert.deepEqual(result.kept, []);
    assert.match(result.failures[0]!.reason, /failed after 2 attempt\(s\): .*timed out/i);
  });
});
