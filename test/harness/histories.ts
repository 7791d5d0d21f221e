/**
 * Replay fixtures: a campaign's workflow runs saved as `temporal workflow show --output json` prints
 * them (test/replay.test.ts replays every file in test/fixtures/histories). Tests record theirs when
 * WEBRL_RECORD_HISTORIES names a folder.
 */
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { campaignWorkflowId } from '../../campaign/control';
import type { TestStack } from './stack';

const execFileAsync = promisify(execFile);

/** Saves each run's history to `<dir>/campaign-<name>-phase-<phase>.json`. */
export async function recordHistories(stack: TestStack, name: string, runs: { runId: string; phase: number }[], dir: string): Promise<void> {
  for (const run of runs) {
    const { stdout } = await execFileAsync(
      stack.temporalBinary,
      [
        'workflow',
        'show',
        '--workflow-id',
        campaignWorkflowId(name),
        '--run-id',
        run.runId,
        '--output',
        'json',
        '--address',
        stack.config.temporal.address,
        '--namespace',
        stack.config.temporal.namespace,
      ],
      { maxBuffer: 256 * 1024 * 1024 },
    );
    await writeFile(join(dir, `campaign-${name}-phase-${run.phase}.json`), stdout);
  }
}
