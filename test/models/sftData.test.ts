/**
 * SFT data files for phase 0 (models/train/sftData.ts): WebRL's LLaMA-Factory sharegpt file in either
 * prompt format, the project's training records, and every problem of a bad file listed with its place.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { chatTemplateFormat } from '../../browser/policies/promptFormat';
import { readSftData, SftDataError } from '../../models/train/sftData';
import { fileURLToPath } from 'node:url';

const CHATML = fileURLToPath(new URL('./fixtures/tokenizers/chatml', import.meta.url));
const PROMPT =
  'Task Instruction: Buy a lamp\n\nRound 0\n\n<|eot_id|><|start_header_id|>user<|end_header_id|>\n<html> </html>\n\n<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n';

function problems(text: string, format: 'webrl-sharegpt' | 'training-records', chat = false): string[] {
  try {
    readSftData('sft.json', text, format, chat ? (messages) => chatTemplateFormat(CHATML).renderChat!(messages) : undefined);
  } catch (error) {
    assert.ok(error instanceof SftDataError, String(error));
    return error.problems;
  }
  assert.fail('the file was accepted');
}

describe('SFT data files', () => {
  test('WebRL’s sharegpt file with the released prompt: the human turn is the prompt, the gpt turn the target', () => {
    const pairs = readSftData(
      'sft.json',
      JSON.stringify([
        {
          conversations: [
            { from: 'human', value: PROMPT },
            { from: 'gpt', value: 'do(action="Click", element="3")' },
          ],
        },
      ]),
      'webrl-sharegpt',
      undefined,
    );
    assert.deepEqual(pairs, [{ where: '[0]', prompt: PROMPT, response: 'do(action="Click", element="3")' }]);
  });

  test('every problem of a bad sharegpt file, with its entry and field', () => {
    const file = JSON.stringify([
      {
        conversations: [
          { from: 'human', value: 'a' },
          { from: 'gpt', value: 'b' },
          { from: 'human', value: 'c' },
          { from: 'gpt', value: 'd' },
        ],
      },
      {
        conversations: [
          { from: 'gpt', value: 'a' },
          { from: 'human', value: 'b' },
        ],
      },
      {
        conversations: [
          { from: 'human', value: 'a' },
          { from: 'bot', value: 'b' },
        ],
      },
      { messages: [] },
      {
        conversations: [
          { from: 'human', value: 'a' },
          { from: 'gpt', value: ' ' },
        ],
      },
    ]);
    assert.deepEqual(problems(file, 'webrl-sharegpt'), [
      '[0] conversations: with promptFormat webrl-llama3 an entry is one human turn (the released prompt) and one gpt turn; it has 4 turns',
      '[1] conversations.0.from: expected human (turns alternate human / gpt after an optional system turn)',
      '[2] conversations.1.from: Invalid option: expected one of "system"|"human"|"gpt"',
      '[3] conversations: missing: each entry needs conversations: [{from, value}, ...]',
      '[4]: the target (response) is empty',
    ]);
    assert.deepEqual(problems('{"conversations": []}', 'webrl-sharegpt'), ['expected a JSON array of {conversations: [...]} entries']);
    assert.match(problems('[{', 'webrl-sharegpt')[0]!, /^not JSON: /);
    assert.deepEqual(problems('[]', 'webrl-sharegpt'), ['no (prompt, response) pairs']);
  });

  test('with chat-template, each gpt turn is a target after the turns before it in the model’s template', () => {
    const file = JSON.stringify([
      {
        conversations: [
          { from: 'human', value: 'a' },
          { from: 'gpt', value: 'b' },
          { from: 'human', value: 'c' },
          { from: 'gpt', value: 'd' },
        ],
      },
    ]);
    const pairs = readSftData('sft.json', file, 'webrl-sharegpt', (messages) => chatTemplateFormat(CHATML).renderChat!(messages));
    assert.deepEqual(
      pairs.map((pair) => [pair.where, pair.prompt, pair.response]),
      [
        ['[0] turn 1', `<|im_start|>user\na<|im_end|>\n<|im_start|>assistant\n`, 'b'],
        ['[0] turn 3', `<|im_start|>user\na<|im_end|>\n<|im_start|>assistant\nb<|im_end|>\n<|im_start|>user\nc<|im_end|>\n<|im_start|>assistant\n`, 'd'],
      ],
    );
    assert.deepEqual(
      problems(
        JSON.stringify([
          {
            conversations: [
              { from: 'human', value: 'a' },
              { from: 'gpt', value: 'b' },
              { from: 'human', value: 'c' },
            ],
          },
        ]),
        'webrl-sharegpt',
        true,
      ),
      ['[0] conversations.2.from: the last turn must be gpt (the target)'],
    );
  });

  test('training records: step records as they are; other lines named', () => {
    const record = {
      schemaVersion: 1,
      kind: 'step',
      id: 't:0',
      campaignId: 'c',
      phase: 0,
      taskId: 't',
      traceId: 't',
      step: 0,
      source: 'demonstration',
      prompt: PROMPT,
      response: 'exit(message="1")',
      nextPrompt: null,
      reward: 1,
      done: true,
      mcReturn: 1,
      refLogprob: null,
      responseTokens: null,
      rank: null,
      state: { intent: 'Buy a lamp' },
    };
    assert.deepEqual(readSftData('r.jsonl', `${JSON.stringify(record)}\n`, 'training-records', undefined), [
      { where: 'line 1', prompt: PROMPT, response: 'exit(message="1")' },
    ]);
    const orm = { schemaVersion: 1, kind: 'orm', id: 'o', campaignId: 'c', phase: 0, taskId: 't', traceId: 't', prompt: 'p', response: 'YES' };
    const bad = [JSON.stringify(record), JSON.stringify(orm), JSON.stringify({ ...record, prompt: 3 }), 'nope'].join('\n');
    const listed = problems(bad, 'training-records');
    assert.equal(listed[0], 'line 2 kind: expected "step" (an orm record trains no actor)');
    assert.match(listed[1]!, /^line 3 prompt: /);
    assert.match(listed[2]!, /^line 4: not JSON: /);
    assert.equal(listed.length, 3);
  });
});
