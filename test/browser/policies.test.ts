import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Observation, ObservedElement } from '../../browser/contract';
import { InfrastructureError } from '../../browser/errors';
import { parseAction } from '../../browser/grammar';
import { createOpenAIPolicy } from '../../browser/policies/openai';
import { createOraclePolicy, registerStepSolver, resolveMatcher } from '../../browser/policies/oracle';
import type { HistoryRound, PolicyInput } from '../../browser/policies/policy';
import { buildPrompt, PROMPT_CHAR_BUDGET } from '../../browser/policies/prompt';
import { createRandomPolicy } from '../../browser/policies/random';
import { startFakeCompletionsServer, type FakeCompletionsServer } from './fakeCompletionsServer';

function element(id: number, tag: string, text: string, attributes: Record<string, string> = {}, extra: Partial<ObservedElement> = {}): ObservedElement {
  return { id, tag, text, fullText: text, attributes, bbox: [0, id * 20, 100, 18], ...extra };
}

const ELEMENTS: ObservedElement[] = [
  element(0, 'a', 'Home', { href: '/' }),
  element(1, 'input', '', { name: 'q', type: 'text', placeholder: 'Search' }),
  { ...element(2, 'a', '', { href: '/p/1' }), fullText: 'Red Shoes $59.99' },
  element(3, 'button', 'Add to cart'),
  element(4, 'button', 'Add to cart'),
  element(5, 'select', '', { name: 'qty' }, { options: ['1', '2', '3'], selectedOption: '1' }),
];

const OBSERVATION: Observation = { url: 'http://127.0.0.1/x', title: 'X', html: '<html> <body> </body> </html>', elements: ELEMENTS };

function input(history: string[] = [], oracle?: PolicyInput['task']['oracle']): PolicyInput {
  return {
    task: { task_id: 't1', intent: 'Buy red shoes', start_url: 'http://127.0.0.1/', ...(oracle ? { oracle } : {}) },
    observation: OBSERVATION,
    history: history.map((response) => ({ response, action: null })),
  };
}

describe('prompt', () => {
  test('round 0 and later rounds follow the released checkpoints format', () => {
    assert.equal(
      buildPrompt('Find X', [], '<html> </html>'),
      'Task Instruction: Find X\n\nRound 0\n\n<|eot_id|><|start_header_id|>user<|end_header_id|>\n<html> </html>\n\n' +
        '<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n',
    );
    assert.equal(
      buildPrompt('Find X', ['# a\ndo(action="Click", element="1")', 'do(action="Scroll Down")'], 'OBS'),
      'Task Instruction: Find X\n\n' +
        'Round 0\n\n<|eot_id|><|start_header_id|>user<|end_header_id|>\nFind X\n\n<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n' +
        '# a\ndo(action="Click", element="1")\n\n' +
        'Round 1\n\n<|eot_id|><|start_header_id|>user<|end_header_id|>\n** Simplified html **\n\n<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n' +
        'do(action="Scroll Down")\n\n' +
        'Round 2\n\n<|eot_id|><|start_header_id|>user<|end_header_id|>\nOBS\n\n<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n',
    );
  });

  test('the observation is cut so history plus observation stay within 16384 - 512 characters', () => {
    const history = ['do(action="Scroll Down")', 'do(action="Scroll Up")'];
    const prompt = buildPrompt('I', history, 'x'.repeat(40_000));
    const observation = /Round 2\n\n<\|eot_id\|><\|start_header_id\|>user<\|end_header_id\|>\n(x*)\n\n/.exec(prompt)?.[1] ?? '';
    const historyPart = prompt.slice('Task Instruction: I\n\n'.length, prompt.indexOf('Round 2'));
    assert.equal(historyPart.length + observation.length, PROMPT_CHAR_BUDGET);
    assert.equal(buildPrompt('I', history, 'short').includes('short'), true);
  });
});

describe('oracle policy', () => {
  test('resolveMatcher matches tag, own or full text, text fragments, raw attributes and nth', () => {
    assert.equal(resolveMatcher({ tag: 'a', text: 'Home' }, ELEMENTS), 0);
    assert.equal(resolveMatcher({ text: 'Red Shoes $59.99' }, ELEMENTS), 2);
    assert.equal(resolveMatcher({ textIncludes: 'red shoes' }, ELEMENTS), 2);
    assert.equal(resolveMatcher({ tag: 'INPUT', attributes: { name: 'q' } }, ELEMENTS), 1);
    assert.equal(resolveMatcher({ text: 'Add to cart', nth: 1 }, ELEMENTS), 4);
    assert.equal(resolveMatcher({ text: 'Add to cart', nth: 2 }, ELEMENTS), undefined);
    assert.equal(resolveMatcher({ tag: 'a', attributes: { name: 'q' } }, ELEMENTS), undefined);
  });

  test('emits WebRL strings with an element comment, step i for round i, then exits', async () => {
    const policy = createOraclePolicy();
    const plan = [
      { action: 'Search' as const, target: { attributes: { name: 'q' } }, argument: 'red "shoes"' },
      { action: 'Select Dropdown Option' as const, target: { tag: 'select' }, argument: '2' },
      { action: 'exit' as const, message: '$59.99' },
    ];
    const first = await policy.act(input([], plan));
    assert.equal(first.response, `# Element: the 'Search' input\ndo(action="Search", argument="red \\"shoes\\"", element="1")`);
    assert.deepEqual(parseAction(first.response), { ok: true, action: { kind: 'Search', element: 1, argument: 'red "shoes"' } });
    assert.equal(first.prompt, buildPrompt('Buy red shoes', [], OBSERVATION.html));
    assert.match((await policy.act(input(['a'], plan))).response, /do\(action="Select Dropdown Option", argument="2", element="5"\)$/);
    assert.equal((await policy.act(input(['a', 'b'], plan))).response, 'exit(message="$59.99")');
    assert.equal((await policy.act(input(['a', 'b', 'c'], plan))).response, 'exit(message="")');
  });

  test('matchers read the printed page: the element after a text, an icon by its printed name, enabled controls, a text pattern', () => {
    const html =
      '<html> <body> <span> Phone: </span> <a id="0"> 555-1234 </a> <span> Address: </span> <a id="2"> 1 Elm St </a> ' +
      '<span id="4" data-label="send"> </span> <button id="3" title="star"> </button> </body> </html>';
    const elements = [element(0, 'a', '555-1234'), element(2, 'a', '1 Elm St'), element(3, 'button', '', { disabled: '' }), element(4, 'span', '')];
    assert.equal(resolveMatcher({ tag: 'a', after: 'Address:' }, elements, html), 2);
    assert.equal(resolveMatcher({ tag: 'a', after: 'Nowhere:' }, elements, html), undefined);
    assert.equal(resolveMatcher({ label: 'send' }, elements, html), 4);
    assert.equal(resolveMatcher({ label: 'star' }, elements, html), 3, 'the webrl profile prints the name as title');
    assert.equal(resolveMatcher({ label: 'star', enabled: true }, elements, html), undefined);
    assert.equal(resolveMatcher({ textMatches: 'St$' }, elements, html), 2);
  });

  test('a step with `until` repeats until its matcher finds an element, none when it already does; `argumentFrom` reads the page', async () => {
    const policy = createOraclePolicy();
    const task = {
      task_id: 'pages',
      intent: 'Open the contact of Ada, then type the file name the page lists',
      start_url: 'http://127.0.0.1/',
      oracle: [
        { action: 'Click' as const, target: { text: 'next' }, until: { text: 'Ada' } },
        { action: 'Scroll Down' as const, until: { text: 'Ada' } },
        { action: 'Type' as const, target: { tag: 'input' }, argument: 'rm $1', argumentFrom: String.raw`files: (?:\S+ )*?(\S+\.gif)` },
      ],
    };
    const page = (name: string): Observation => ({
      url: 'http://127.0.0.1/',
      title: '',
      html: `<html> <body> <a id="0"> next </a> <a id="1"> ${name} </a> files: a.txt b.gif <input id="2"> </input> </body> </html>`,
      elements: [element(0, 'a', 'next'), element(1, 'a', name), element(2, 'input', '')],
    });
    const history: PolicyInput['history'][number][] = [];
    const act = async (name: string) => {
      const { response } = await policy.act({ task, observation: page(name), history });
      history.push({ response, action: null });
      return response;
    };
    assert.match(await act('Bob'), /do\(action="Click", element="0"\)$/);
    assert.match(await act('Cy'), /do\(action="Click", element="0"\)$/, 'the step repeats while Ada does not show');
    assert.match(await act('Ada'), /do\(action="Type", argument="rm b\.gif", element="2"\)$/, 'both `until` steps are done once Ada shows');
    assert.equal(await act('Ada'), 'exit(message="")');
    await assert.rejects(
      createOraclePolicy().act({ task: { ...task, oracle: [task.oracle[2]!] }, observation: { ...page('Ada'), html: '<html> </html>' }, history: [] }),
      /the page's text does not match files: /,
    );
  });

  test('a solve step hands each later round to its step solver, with the episode its memory, until its last step', async () => {
    const seen: number[] = [];
    registerStepSolver('test/count-to-two', ({ observation, history, memory }) => {
      seen.push(history.length);
      memory.rounds = ((memory.rounds as number | undefined) ?? 0) + 1;
      const step = { action: 'Click' as const, target: { tag: 'button', nth: memory.rounds === 1 ? 0 : 1 } };
      return observation.elements.length ? { step, last: memory.rounds === 2 } : undefined;
    });
    assert.throws(() => registerStepSolver('test/count-to-two', () => undefined), /registered already/);
    const plan = [
      { action: 'Click' as const, target: { text: 'Home' } },
      { action: 'solve' as const, solver: 'test/count-to-two' },
    ];
    const policy = createOraclePolicy();
    // The episode loop keeps one history array per episode, growing it each round.
    const history: HistoryRound[] = [];
    const responses: string[] = [];
    for (let round = 0; round < 4; round++) {
      const { response } = await policy.act({ ...input([], plan), history });
      responses.push(response);
      history.push({ response, action: null });
    }
    assert.deepEqual(
      responses.map((r) => r.split('\n').at(-1)),
      ['do(action="Click", element="0")', 'do(action="Click", element="3")', 'do(action="Click", element="4")', 'exit(message="")'],
    );
    assert.deepEqual(seen, [1, 2], 'asked from the solve step on, not after its last step');
    // Another episode (a new history) starts the solver afresh.
    assert.match((await policy.act({ ...input([], plan), history: [{ response: 'x', action: null }] })).response, /element="3"/);
    await assert.rejects(
      createOraclePolicy().act(input([], [{ action: 'solve', solver: 'test/no-such-solver' }])),
      /no step solver named test\/no-such-solver/,
    );
    const blind = { ...input([], [{ action: 'solve' as const, solver: 'test/count-to-two' }]), observation: { ...OBSERVATION, elements: [] } };
    await assert.rejects(createOraclePolicy().act(blind), /step solver test\/count-to-two found no step/);
  });

  test('a step whose target matches nothing is a PolicyError naming the matcher', async () => {
    await assert.rejects(createOraclePolicy().act(input([], [{ action: 'Click', target: { text: 'Checkout' } }])), /no element matches \{"text":"Checkout"\}/);
    await assert.rejects(createOraclePolicy().act(input()), /has no oracle plan/);
  });
});

describe('random policy', () => {
  test('is reproducible per (seed, task, round) and only emits actions valid for the observation', async () => {
    const policy = createRandomPolicy({ seed: 3 });
    const kinds = new Set<string>();
    for (let round = 0; round < 300; round++) {
      const history = Array.from({ length: round }, () => 'x');
      const { response } = await policy.act(input(history));
      assert.equal((await policy.act(input(history))).response, response, 'same seed, task and round');
      const parsed = parseAction(response);
      assert.ok(parsed.ok, response);
      const action = parsed.action;
      kinds.add(action.kind);
      if ('element' in action) {
        const target = ELEMENTS.find((e) => e.id === action.element);
        assert.ok(target, `element ${action.element} exists`);
        if (action.kind === 'Type' || action.kind === 'Search') assert.equal(target.tag, 'input');
        if (action.kind === 'Select Dropdown Option') assert.ok(target.options?.includes(action.argument));
      }
    }
    assert.equal(kinds.size, 11, `all 11 action kinds appear: ${[...kinds].join(', ')}`);
  });

  test('different seeds give different rollouts', async () => {
    const run = async (seed: number) => {
      const policy = createRandomPolicy({ seed });
      const responses: string[] = [];
      for (let round = 0; round < 20; round++) responses.push((await policy.act(input(responses))).response);
      return responses;
    };
    assert.deepEqual(await run(3), await run(3));
    assert.notDeepEqual(await run(3), await run(4));
  });
});

describe('openai policy against a local completions server', () => {
  let server: FakeCompletionsServer;
  const KEY = 'sk-test-secret-key-0123456789';

  before(async () => {
    server = await startFakeCompletionsServer();
    process.env.WEBRL_TEST_KEY = KEY;
  });
  after(async () => {
    delete process.env.WEBRL_TEST_KEY;
    await server.close();
  });

  const policy = (overrides: Partial<Parameters<typeof createOpenAIPolicy>[0]> = {}) =>
    createOpenAIPolicy({ baseURL: server.baseURL, model: 'webrl-llama-3.1-8b', apiKeyEnv: 'WEBRL_TEST_KEY', retryDelayMs: 5, ...overrides });

  test('sends the WebRL prompt with stop, temperature and max tokens, and returns the raw text', async () => {
    server.requests.length = 0;
    server.script = [{ kind: 'completion', text: '# Element: the cart\ndo(action="Click", element="3")' }];
    const out = await policy({ temperature: 0.7, maxTokens: 256 }).act(input(['do(action="Scroll Down")']));
    assert.equal(out.response, '# Element: the cart\ndo(action="Click", element="3")');
    assert.equal(server.requests.length, 1);
    const request = server.requests[0]!;
    assert.equal(request.path, '/v1/completions');
    assert.equal(request.headers.authorization, `Bearer ${KEY}`);
    assert.deepEqual(
      { ...request.body, prompt: undefined },
      { model: 'webrl-llama-3.1-8b', prompt: undefined, temperature: 0.7, top_p: 1, top_k: -1, max_tokens: 256, stop: ['<|eot_id|>'] },
    );
    assert.equal(request.body.prompt, out.prompt);
    assert.equal(out.prompt, buildPrompt('Buy red shoes', ['do(action="Scroll Down")'], OBSERVATION.html));
  });

  test('malformed replies and server errors are retried, then succeed', async () => {
    server.requests.length = 0;
    server.script = [
      { kind: 'broken-json' },
      { kind: 'no-choices' },
      { kind: 'status', status: 503, message: 'loading model' },
      { kind: 'completion', text: 'exit(message="ok")' },
    ];
    const out = await policy({ maxAttempts: 4 }).act(input());
    assert.equal(out.response, 'exit(message="ok")');
    assert.equal(server.requests.length, 4);
  });

  test('retries are bounded: persistent garbage ends in a clear policy_unavailable error without the key', async () => {
    server.requests.length = 0;
    server.script = [{ kind: 'no-choices' }, { kind: 'no-choices' }, { kind: 'no-choices' }];
    await assert.rejects(policy({ maxAttempts: 3 }).act(input()), (error: unknown) => {
      assert.ok(error instanceof InfrastructureError);
      assert.equal(error.reason, 'policy_unavailable');
      assert.match(error.message, /failed after 3 attempt\(s\): the reply has no choices/);
      assert.ok(!error.message.includes(KEY));
      return true;
    });
    assert.equal(server.requests.length, 3);
  });

  test('a slow server times out per request and is retried a bounded number of times', async () => {
    server.requests.length = 0;
    server.script = [
      { kind: 'slow', delayMs: 5000, text: 'late' },
      { kind: 'slow', delayMs: 5000, text: 'late' },
    ];
    const started = performance.now();
    await assert.rejects(policy({ timeoutMs: 200, maxAttempts: 2 }).act(input()), /failed after 2 attempt\(s\).*timed out/i);
    assert.ok(performance.now() - started < 4000, 'gave up long before the server answered');
    assert.equal(server.requests.length, 2);
  });

  test('client errors are not retried', async () => {
    server.requests.length = 0;
    server.script = [{ kind: 'status', status: 400, message: 'prompt too long' }];
    await assert.rejects(policy({ maxAttempts: 3 }).act(input()), /failed after 1 attempt\(s\) \(HTTP 400\)/);
    assert.equal(server.requests.length, 1);
  });

  test('an aborted episode deadline stops the request', async () => {
    server.script = [{ kind: 'slow', delayMs: 5000, text: 'late' }];
    const controller = new AbortController();
    const pending = policy().act({ ...input(), signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    await assert.rejects(pending, (error: unknown) => !(error instanceof InfrastructureError));
  });
});
