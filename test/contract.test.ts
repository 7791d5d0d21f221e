/**
 * The TypeScript-Python contract: the committed training-record JSON Schema and trainer contract
 * (test/harness/contractFiles.ts) equal what the TypeScript code generates now; and both languages render
 * the same prompts from the one template file (trainers/torch/webrl_torch/prompt-templates.json), the
 * UTF-16 budget cut included: TypeScript's buildPrompt and ormUserTurn against webrl_torch/prompt.py run
 * by the system's Python (the module needs only the standard library).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { buildPrompt, PROMPT_CHAR_BUDGET } from '../browser/policies/prompt';
import { ormUserTurn } from '../models/remote/chatOrm';
import { CONTRACT_FILES, REGENERATE, repositoryPath } from './harness/contractFiles';

describe('files generated for the Python trainer are current', () => {
  for (const file of CONTRACT_FILES) {
    test(file.path, () => {
      const committed = readFileSync(repositoryPath(file.path), 'utf8');
      assert.ok(
        committed === file.text(),
        `${file.path} is stale: the TypeScript contract changed; regenerate it with \`${REGENERATE}\`, review the diff and commit it`,
      );
    });
  }
});

interface PromptCase {
  name: string;
  intent: string;
  history: string[];
  html: string;
}

const CLICK = 'do(action="Click", element="3")';
const page = (label: string, size: number) =>
  `<html> <body> ${`<p> ${label} </p> `.repeat(Math.ceil(size / (label.length + 10)))}</body> </html>`.slice(0, size);

/** States that exercise every branch of the prompt: history rounds, the budget cut, non-BMP characters. */
function promptCases(): PromptCase[] {
  const longHistory = Array.from({ length: 40 }, (_, i) => `Round ${i}: thinking about row ${i}. ${'The table lists more products. '.repeat(4)}${CLICK}`);
  return [
    { name: 'first round', intent: 'Buy a lamp', history: [], html: '<html> <button id="3"> Go </button> é </html>' },
    { name: 'two rounds of history', intent: 'Find the cheapest lamp', history: [CLICK, 'type(element="5", text="lamp")'], html: page('lamp', 400) },
    { name: 'page over the budget', intent: 'Count the reviews', history: [CLICK], html: page('review', PROMPT_CHAR_BUDGET + 500) },
    { name: 'long history, page cut', intent: 'List every order of 2023', history: longHistory, html: page('order', 9_000) },
    {
      name: 'history over the budget, no room for the page',
      intent: 'Read the forum',
      history: Array.from({ length: 55 }, () => `${'scroll down. '.repeat(10)}${CLICK}`),
      html: page('post', 500),
    },
    // An emoji is two UTF-16 units and one code point: the budget counts UTF-16 units, as JavaScript does.
    {
      name: 'emoji in the history, page cut',
      intent: 'Reply 👍 to the post',
      history: ['The post says 🎉🎉 great!', `${CLICK} 😀`],
      html: page('thread', PROMPT_CHAR_BUDGET),
    },
    // The cut falls inside the emoji's surrogate pair: JavaScript keeps the lone high surrogate.
    { name: 'emoji cut in half by the budget', intent: 'Open the emoji page', history: [], html: `${'a'.repeat(PROMPT_CHAR_BUDGET - 1)}😀 tail` },
    { name: 'emoji in the page under the budget', intent: 'Rate the hotel', history: [], html: '<html> <p> 🏨 five stars ⭐⭐⭐⭐⭐ </p> </html>' },
  ];
}

/** Python's renderings of the cases: [build_prompt, orm_user_turn] for each. */
const RENDER_IN_PYTHON = `
import json, sys
from webrl_torch.prompt import build_prompt, orm_user_turn
cases = json.loads(sys.stdin.buffer.read().decode("utf-8", "surrogatepass"))
out = [[build_prompt(c["intent"], c["history"], c["html"]), orm_user_turn(c["intent"], c["history"], c["html"])] for c in cases]
sys.stdout.buffer.write(json.dumps(out).encode())
`;

describe('both languages render the prompts from the one template file', () => {
  const cases = promptCases();
  const python = spawnSync(process.env.WEBRL_PYTHON ?? 'python3', ['-c', RENDER_IN_PYTHON], {
    input: JSON.stringify(cases),
    env: { ...process.env, PYTHONPATH: repositoryPath('trainers/torch') },
    encoding: 'utf8',
  });

  test('the cases cover the budget cut and characters outside the BMP', () => {
    assert.ok(cases.some((c) => c.html.length > PROMPT_CHAR_BUDGET));
    assert.ok(cases.some((c) => /[\u{10000}-\u{10FFFF}]/u.test(c.intent + c.html)));
    assert.equal(python.status, 0, `python failed: ${python.error?.message ?? python.stderr}`);
  });

  cases.forEach((c, i) => {
    test(c.name, () => {
      const [prompt, ormUser] = (JSON.parse(python.stdout) as [string, string][])[i]!;
      assert.equal(prompt, buildPrompt(c.intent, c.history, c.html), 'the actor prompt');
      const state = {
        intent: c.intent,
        history: c.history.map((response) => ({ response, action: null })),
        observation: { url: '', title: '', html: c.html, elements: [] },
      };
      assert.equal(ormUser, ormUserTurn(state), "the chat ORM's user turn");
    });
  });
});
