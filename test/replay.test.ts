import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import { Worker } from '@temporalio/worker';
import { workflowBundle } from '../workers/factory';
import { WORKFLOWS_PATH } from '../workers/run';

// Histories recorded from real campaign runs (test/campaign.test.ts and test/campaignWebarena.test.ts
// with WEBRL_RECORD_HISTORIES set).
// Replaying them against the current workflow code catches non-deterministic changes before they
// break running campaigns; a deliberate change must go behind patched() and keep these passing.
const FIXTURES = fileURLToPath(new URL('./fixtures/histories/', import.meta.url));

describe('recorded campaign histories replay against the current workflow code', () => {
  const files = readdirSync(FIXTURES)
    .filter((f) => f.endsWith('.json'))
    .sort();

  test('fixtures cover SFT, a curriculum phase, and a failed-then-retried phase', () => {
    assert.ok(files.length >= 3, `only ${files.length} recorded histories`);
  });

  for (const file of files) {
    test(`replays ${file}`, async () => {
      const history = JSON.parse(readFileSync(`${FIXTURES}${file}`, 'utf8')) as unknown;
      await Worker.runReplayHistory({ workflowBundle: await workflowBundle(WORKFLOWS_PATH) }, history, file);
    });
  }
});
