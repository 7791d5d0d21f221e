/**
 * The TypeScript-Python contract files are current: the committed training-record JSON Schema and golden
 * prompts (test/harness/contractFiles.ts) equal what the TypeScript code generates now.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
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
