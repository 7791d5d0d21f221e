/**
 * Files the TypeScript side generates for the Python trainer, committed so the trainer reads the same
 * contract: the training records' JSON Schema and the trainer's objectives and variables.
 * test/contract.test.ts fails when a committed file is stale; this module rewrites
 * them: `node --import tsx test/harness/contractFiles.ts`.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { PROMPT_FORMATS } from '../../browser/policies/promptFormatNames';
import { DATA_FORMATS, OBJECTIVES, TRAINER_VARIABLES } from '../../models/train/trainerContract';
import { trainingRecordJsonSchema } from '../../models/train/trainingRecord';

export const REGENERATE = 'node --import tsx test/harness/contractFiles.ts';

export interface ContractFile {
  /** Path from the repository root. */
  path: string;
  text: () => string;
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
];

export const repositoryPath = (path: string) => fileURLToPath(new URL(`../../${path}`, import.meta.url));

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  for (const file of CONTRACT_FILES) {
    writeFileSync(repositoryPath(file.path), file.text());
    console.log(`wrote ${file.path}`);
  }
}
