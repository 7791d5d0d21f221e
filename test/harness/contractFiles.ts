/**
 * Files the TypeScript side generates for the Python trainer, committed so the trainer reads the same
 * contract: the training records' JSON Schema, the trainer's objectives and variables, and golden prompts (browser/policies/prompt.ts over a
 * handful of states). test/contract.test.ts fails when a committed file is stale; this module rewrites
 * them: `node --import tsx test/harness/contractFiles.ts`.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildPrompt, PROMPT_CHAR_BUDGET } from '../../browser/policies/prompt';
import { PROMPT_FORMATS } from '../../browser/policies/promptFormatNames';
import { DATA_FORMATS, OBJECTIVES, TRAINER_VARIABLES } from '../../models/train/trainerContract';
import { trainingRecordJsonSchema } from '../../models/train/trainingRecord';

export const REGENERATE = 'node --import tsx test/harness/contractFiles.ts';

export interface ContractFile {
  /** Path from the repository root. */
  path: string;
  text: () => string;
}

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
export function promptCases(): PromptCase[] {
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

export const CONTRACT_FILES: ContractFile[] = [
  {
    path: 'trainers/torch/webrl_torch/training-record.schema.json',
    // Exactly what `webrl schema training-record` prints.
    text: () => `${JSON.stringify(trainingRecordJsonSchema(), null, 2)}\n`,
  },
  {
    path: 'trainers/torch/webrl_torch/trainer-contract.json',
    // The objectives, data formats and job variables (models/train/trainerContract.ts).
    text: () =>
      `${JSON.stringify({ objectives: OBJECTIVES, dataFormats: DATA_FORMATS, promptFormats: PROMPT_FORMATS, variables: TRAINER_VARIABLES }, null, 2)}\n`,
  },
  {
    path: 'trainers/torch/tests/golden_prompts.json',
    text: () =>
      `${JSON.stringify(
        promptCases().map((c) => ({ ...c, prompt: buildPrompt(c.intent, c.history, c.html) })),
        null,
        1,
      )}\n`,
  },
];

export const repositoryPath = (path: string) => fileURLToPath(new URL(`../../${path}`, import.meta.url));

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  for (const file of CONTRACT_FILES) {
    writeFileSync(repositoryPath(file.path), file.text());
    console.log(`wrote ${file.path}`);
  }
}
