import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { registerEnvCommands } from '../../cli/env';
import { registerTaskCommands } from '../../cli/tasks';
import { runWebrlInProcess } from '../harness/cli';
import { WEBARENA_LITE_TEST_FILE } from '../harness/data';

/** Runs `webrl ARGS` with the env and tasks commands; returns what it printed and the exit code. */
const webrl = (...args: string[]) =>
  runWebrlInProcess(
    (program) => {
      registerEnvCommands(program);
      registerTaskCommands(program);
    },
    ...args,
  );

describe('CLI', () => {
  test('tasks validate prints counts per site and eval type for the WebArena-Lite file', async () => {
    const { out, exitCode } = await webrl('tasks', 'validate', WEBARENA_LITE_TEST_FILE);
    assert.equal(exitCode, 0);
    assert.match(out, /165 tasks, all evaluators built/);
    assert.match(out, /shopping_admin\s+36/);
    assert.match(out, /string_match\s+80/);
  });

  test('tasks validate exits non-zero naming the task and field of a bad file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'webrl-cli-'));
    try {
      const bad = join(dir, 'bad.json');
      await writeFile(
        bad,
        JSON.stringify([{ sites: ['reddit'], task_id: 3, start_url: '__REDDIT__', intent: 'x', eval: { eval_types: ['string_match', 'visual_match'] } }]),
      );
      const { err, exitCode } = await webrl('tasks', 'validate', bad);
      assert.equal(exitCode, 1);
      assert.match(err, /task 3: eval\.eval_types\[1\]/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('env tasks lists one split, filtered by site', async () => {
    const { out } = await webrl('env', 'tasks', '--split', 'test', '--site', 'reddit');
    const lines = out.split('\n').filter((l) => / t\d{3} /.test(l));
    assert.ok(lines.length > 0 && lines.every((l) => l.includes(' reddit ')));
    assert.match(out, /tasks \(test split, seed \d+, site reddit\)$/);
  });
});
