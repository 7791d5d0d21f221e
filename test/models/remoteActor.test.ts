/**
 * Action log-probs over an OpenAI-compatible completions endpoint, against a local server speaking the
 * OpenAI legacy echo shape and vLLM's prompt_logprobs shape, including malformed, failing and slow
 * replies; the API key comes from the environment and never shows in errors.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { STOP_TOKEN, buildPrompt } from '../../browser/policies/prompt';
import type { ScoredAction } from '../../models/actor';
import { createCompletionsActorScorer } from '../../models/remote/completionsActor';
import { RemoteModelError } from '../../models/remote/retry';
import { KETTLE_ANSWER } from './fixtures/shop';
import { echoCompletion, promptLogprobsCompletion, startServer, toyLogprob, toyTokens, type Reply, type TestServer } from './fixtures/servers';

const KEY_ENV = 'WEBRL_TEST_ACTOR_KEY';
const SECRET = 'sk-test-secret-4711';
let server: TestServer;
let behaviour: (body: { prompt: string; model: string }) => Reply;

before(async () => {
  process.env[KEY_ENV] = SECRET;
  server = await startServer((request) => behaviour(request.body as { prompt: string; model: string }));
});

after(async () => {
  delete process.env[KEY_ENV];
  await server.close();
});

const item: ScoredAction = KETTLE_ANSWER;

/** The toy model's expected log-prob of the action: the tokens covering the text after the prompt (the reply and its end of turn). */
function expected(reply: string): { logProb: number; tokens: number } {
  const response = reply + STOP_TOKEN;
  const prompt = buildPrompt(
    item.state.intent,
    item.state.history.map((round) => round.response),
    item.state.observation.html,
  );
  const tokens = toyTokens(prompt + response);
  let start = 0;
  let covered = 0;
  for (let i = tokens.length - 1; i >= 0 && covered < response.length; i--) {
    covered += tokens[i]!.length;
    start = i;
  }
  const action = tokens.slice(start);
  return { logProb: action.reduce((sum, token) => sum + toyLogprob(token), 0), tokens: action.length };
}

const scorer = (options: Partial<Parameters<typeof createCompletionsActorScorer>[0]> = {}) =>
  createCompletionsActorScorer({ baseURL: `${server.url}/v1`, model: 'webrl-llama', apiKeyEnv: KEY_ENV, retryDelayMs: 1, maxAttempts: 3, ...options });

describe('completions actor log-probs', () => {
  test('echo mode: sums the log-probs of the action tokens after the WebRL prompt', async () => {
    behaviour = (body) => ({ json: echoCompletion(body.prompt, body.model) });
    const start = server.requests.length;
    const [result] = await scorer().logProbs([item]);
    const want = expected(item.response);
    assert.equal(result!.tokens, want.tokens);
    assert.ok(Math.abs(result!.logProb - want.logProb) < 1e-9);
    assert.ok(Math.abs(result!.meanTokenLogProb - want.logProb / want.tokens) < 1e-9);
    const request = server.requests[start]!;
    assert.equal(request.url, '/v1/completions');
    assert.equal(request.headers.authorization, `Bearer ${SECRET}`);
    const body = request.body as Record<string, unknown>;
    assert.deepEqual([body.echo, body.logprobs, body.max_tokens], [true, 1, 0]);
    assert.ok(String(body.prompt).startsWith('Task Instruction: What is the price'));
    assert.ok(String(body.prompt).endsWith(`<|start_header_id|>assistant<|end_header_id|>\n${item.response}${STOP_TOKEN}`));
  });

  test('echo mode: a BOS token before the text, and a generated token after it, leave the action intact', async () => {
    // vLLM with a BOS-adding tokenizer (Llama-3) echoes the BOS and counts it in text_offset; a server
    // that insists on max_tokens >= 1 appends a generated token after the prompt.
    for (const bos of [null, '<|begin_of_text|>', '<s>']) {
      behaviour = (body) => {
        const reply = echoCompletion(body.prompt, body.model, bos);
        const logprobs = reply.choices[0]!.logprobs;
        logprobs.tokens.push(' extra');
        logprobs.token_logprobs.push(-3);
        logprobs.text_offset.push(logprobs.text_offset.at(-1)! + 10_000);
        return { json: reply };
      };
      const [result] = await scorer().logProbs([item]);
      const want = expected(item.response);
      assert.equal(result!.tokens, want.tokens, `bos ${bos}`);
      assert.ok(Math.abs(result!.logProb - want.logProb) < 1e-9, `bos ${bos}`);
    }
  });

  test("prompt_logprobs mode: reads vLLM's per-token dictionaries, picking the prompt's own token by id", async () => {
    for (const alternatives of [0, 2]) {
      behaviour = (body) => ({
        json: promptLogprobsCompletion(body.prompt, body.model, { alternatives, tokenIds: (body as { return_token_ids?: boolean }).return_token_ids === true }),
      });
      const start = server.requests.length;
      const results = await scorer({ mode: 'prompt_logprobs' }).logProbs([item, { ...item, response: 'do(action="Click", element="3")' }]);
      assert.ok(Math.abs(results[0]!.logProb - expected(item.response).logProb) < 1e-9, `${alternatives} alternatives`);
      assert.equal(results[1]!.tokens, expected('do(action="Click", element="3")').tokens);
      const body = server.requests[start]!.body as Record<string, unknown>;
      assert.deepEqual([body.prompt_logprobs, body.return_token_ids], [0, true]);
    }
    // Without prompt_token_ids an entry of several tokens cannot be read: a malformed reply, not a wrong number.
    behaviour = (body) => ({ json: promptLogprobsCompletion(body.prompt, body.model, { alternatives: 1 }) });
    await assert.rejects(scorer({ mode: 'prompt_logprobs', maxAttempts: 1 }).logProbs([item]), /does not say which token is the prompt's/);
  });

  test('a malformed reply is retried; a reply that stays malformed fails clearly after the attempts', async () => {
    let calls = 0;
    behaviour = (body) => (calls++ === 0 ? { json: { choices: [{ text: 'oops' }] } } : { json: echoCompletion(body.prompt, body.model) });
    const start = server.requests.length;
    const [recovered] = await scorer().logProbs([item]);
    assert.equal(recovered!.tokens, expected(item.response).tokens);
    assert.equal(server.requests.length - start, 2);

    behaviour = () => ({ json: { choices: [{ logprobs: { tokens: ['a'], token_logprobs: [] } }] } });
    const before = server.requests.length;
    await assert.rejects(scorer().logProbs([item]), (error: unknown) => {
      assert.ok(error instanceof RemoteModelError);
      assert.match(error.message, /failed after 3 attempt\(s\): .*tokens \/ token_logprobs/);
      return true;
    });
    assert.equal(server.requests.length - before, 3);
  });

  test('a slow server times out, is retried a bounded number of times, then fails', async () => {
    behaviour = () => 'hang';
    const before = server.requests.length;
    await assert.rejects(scorer({ timeoutMs: 200, maxAttempts: 2 }).logProbs([item]), /failed after 2 attempt\(s\): .*timed out/i);
    assert.equal(server.requests.length - before, 2);
  });

  test('a client error fails at once; the key never appears in the error', async () => {
    behaviour = () => ({ status: 400, json: { error: { message: 'prompt too long', type: 'invalid_request_error' } } });
    const before = server.requests.length;
    await assert.rejects(scorer().logProbs([item]), (error: unknown) => {
      assert.match(String((error as Error).message), /failed after 1 attempt\(s\): .*400/);
      assert.ok(!JSON.stringify(error, Object.getOwnPropertyNames(error)).includes(SECRET));
      assert.ok(!String((error as Error).stack).includes(SECRET));
      return true;
    });
    assert.equal(server.requests.length - before, 1);
  });
});
