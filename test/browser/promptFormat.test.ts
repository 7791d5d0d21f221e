/**
 * The actor's prompt formats (browser/policies/promptFormat.ts): webrl-llama3 is the released prompt
 * byte for byte, its character cut counted; chat-template renders a tokenizer directory's own template,
 * leaves out the BOS the tokenizer adds itself and finds the end of turn. (Against real vLLM and
 * SmolLM2's files, with the token budget: test/models/vllmSmolLM2.test.ts.)
 */
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import { buildPrompt, PROMPT_CHAR_BUDGET } from '../../browser/policies/prompt';
import { createPromptBuilder } from '../../browser/policies/promptBudget';
import { chatTemplateFormat, promptFormatOf, webrlLlama3Format } from '../../browser/policies/promptFormat';

const tokenizer = (name: string) => fileURLToPath(new URL(`../models/fixtures/tokenizers/${name}`, import.meta.url));
const PAST = ['do(action="Click", element="1")'];

describe('prompt formats', () => {
  test('webrl-llama3: the released prompt, its character cut counted', async () => {
    const builder = createPromptBuilder(webrlLlama3Format);
    assert.deepEqual(await builder.build('Buy a lamp', PAST, '<html> lamp </html>'), {
      prompt: buildPrompt('Buy a lamp', PAST, '<html> lamp </html>'),
      observationCut: 0,
    });
    const long = 'x'.repeat(PROMPT_CHAR_BUDGET + 100);
    const built = await builder.build('Buy a lamp', [], long);
    assert.equal(built.prompt, buildPrompt('Buy a lamp', [], long));
    assert.equal(built.observationCut, long.length - PROMPT_CHAR_BUDGET);
    assert.equal(webrlLlama3Format.endOfTurn, '<|eot_id|>');
    assert.equal(promptFormatOf({ promptFormat: 'webrl-llama3' }), webrlLlama3Format);
  });

  test('chat-template: one user turn per round, past outputs as assistant turns, the end of turn found in the template', () => {
    const format = chatTemplateFormat(tokenizer('chatml'));
    assert.equal(format.endOfTurn, '<|im_end|>');
    assert.equal(
      format.render('Buy a lamp', PAST, '<html> lamp </html>'),
      '<|im_start|>user\nTask Instruction: Buy a lamp\n\nRound 0\n\nBuy a lamp<|im_end|>\n<|im_start|>assistant\ndo(action="Click", element="1")<|im_end|>\n' +
        '<|im_start|>user\nRound 1\n\n<html> lamp </html><|im_end|>\n<|im_start|>assistant\n',
    );
    assert.equal(format.observationRoom('Buy a lamp', PAST), Number.POSITIVE_INFINITY);
  });

  test('a template that writes the BOS the tokenizer also adds: the text leaves it out (no double BOS)', () => {
    const format = chatTemplateFormat(tokenizer('llama3-bos'));
    assert.equal(format.endOfTurn, '<|eot_id|>');
    assert.equal(
      format.render('Buy a lamp', [], '<p>'),
      '<|start_header_id|>user<|end_header_id|>\n\nTask Instruction: Buy a lamp\n\nRound 0\n\n<p><|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n',
    );
  });

  test('a directory without a template is refused, naming it', () => {
    assert.throws(() => promptFormatOf({ promptFormat: 'chat-template' }), /needs models\.actor\.tokenizer/);
    assert.throws(() => chatTemplateFormat(tokenizer('missing')), /cannot read .*missing\/tokenizer_config\.json/);
  });
});
