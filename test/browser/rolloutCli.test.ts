import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { registerRolloutCommand } from '../../cli/rollout';
import type { EpisodeOutcome } from '../../browser/episodeRecord';
import { readTraceFile } from '../../browser/traces';
import { shopTasks } from './fixtures/shop';
import { SITE_DIR } from './helpers';
import { train } from '../../models/train/trainer';
import { demonstrations, TRAIN_TASKS } from '../models/fixtures/data';

let dir: string;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'webrl-rollout-cli-'));
});

after(async () => {
  await rm(dir, { recursive: true, force: true });
  process.exitCode = 0;
});

/**
 * Reads a rollout directory the way WebRL's scripts/process_data.py (trace_process) does: every
 * `traces/<id>.jsonl`, its score from `actions/<id>.json`'s `score`, and per row the fields the
 * script and its builders use (prompt, html, response, target). Plain JSON, none of this project's
 * readers, so the layout is checked on its own terms.
 */
async function readAsWebrl(out: string): Promise<Map<string, { score: number; rows: { prompt: string; html: string; response: string; target: string }[] }>> {
  const read = new Map<string, { score: number; rows: { prompt: string; html: string; response: string; target: string }[] }>();
  for (const name of await readdir(join(out, 'traces'))) {
    if (!name.endsWith('.jsonl')) continue;
    const traceId = name.split('.jsonl')[0]!;
    const { score } = JSON.parse(await readFile(join(out, 'actions', `${traceId}.json`), 'utf8')) as { score: number };
    const rows = (await readFile(join(out, 'traces', name), 'utf8'))
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as { prompt: string; html: string; response: string; target: string });
    for (const row of rows)
      for (const field of ['prompt', 'html', 'response', 'target'] as const) assert.equal(typeof row[field], 'string', `${name}: ${field}`);
    read.set(traceId, { score, rows });
  }
  return read;
}

/** Runs `webrl rollout ...` in-process, capturing what it prints. */
async function rollout(args: string[], deps: Parameters<typeof registerRolloutCommand>[1] = {}): Promise<string[]> {
  const program = new Command('webrl').exitOverride();
  registerRolloutCommand(program, deps);
  const lines: string[] = [];
  const log = console.log;
  console.log = (...parts: unknown[]) => void lines.push(parts.join(' '));
  try {
    await program.parseAsync(['rollout', ...args], { from: 'user' });
  } finally {
    console.log = log;
  }
  return lines;
}

describe('webrl rollout', () => {
  test('runs a task file on served fixture pages and writes traces, outcomes and a summary', async () => {
    // The plain task format: the shop tasks without their test-only cart expectation.
    const tasks = shopTasks(4).map(({ expected_cart: _cart, ...task }) => task);
    const tasksFile = join(dir, 'tasks.json');
    await writeFile(tasksFile, JSON.stringify(tasks));
    const out = join(dir, 'out');
    const printed = await rollout(['--tasks', tasksFile, '--policy', 'oracle', '--concurrency', '2', '--out', out, '--serve', SITE_DIR]);

    assert.equal(printed.filter((l) => l.startsWith('PASS task shop-')).length, 4, printed.join('\n'));
    assert.match(printed.join('\n'), /4 episodes: 4 passed, mean score 1\.000, 0 infrastructure failures/);
    const outcomes = (await readFile(join(out, 'outcomes.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as EpisodeOutcome);
    assert.deepEqual(outcomes.map((o) => o.taskId).sort(), ['shop-0', 'shop-1', 'shop-2', 'shop-3']);
    const summary = JSON.parse(await readFile(join(out, 'summary.json'), 'utf8')) as { episodes: number; passed: number; reasons: Record<string, number> };
    assert.deepEqual([summary.episodes, summary.passed, summary.reasons], [4, 4, { exit: 4 }]);
    assert.deepEqual((await readdir(join(out, 'traces'))).sort(), ['shop-0.jsonl', 'shop-1.jsonl', 'shop-2.jsonl', 'shop-3.jsonl']);
    const trace = await readTraceFile(join(out, 'traces', 'shop-0.jsonl'));
    assert.equal(trace[0]!.target, tasks[0]!.intent);

    // WebRL's process_data.py layout: actions/<trace_id>.json with the score beside traces/.
    const webrl = await readAsWebrl(out);
    assert.deepEqual([...webrl.keys()].sort(), ['shop-0', 'shop-1', 'shop-2', 'shop-3']);
    for (const [traceId, { score, rows }] of webrl) {
      assert.equal(score, 1, traceId);
      assert.ok(rows.length > 0, traceId);
      assert.equal(rows[0]!.prompt, rows[0]!.target, 'round 0 stands for the intent');
      assert.ok(
        rows.slice(1).every((row) => row.prompt === '** Simplified html **'),
        traceId,
      );
      assert.match(rows.at(-1)!.response, /^exit\(/);
    }
  });

  test('the environment is pluggable and the random policy runs without oracle plans', async () => {
    const tasksFile = join(dir, 'plain.json');
    await writeFile(tasksFile, JSON.stringify([{ task_id: 1, intent: 'Look around', start_url: 'index.html' }]));
    const seen: string[] = [];
    const printed = await rollout(['--tasks', tasksFile, '--policy', 'random', '--max-steps', '3', '--out', join(dir, 'random'), '--serve', SITE_DIR], {
      createEnvironment: ({ baseUrl, tasks }) => ({
        async prepareEpisode(_context, task) {
          seen.push(`${task.task_id}@${tasks.length}`);
          return { startUrl: `${baseUrl}/${task.start_url}`, evaluate: async () => 0.5, dispose: async () => undefined };
        },
      }),
    });
    assert.deepEqual(seen, ['1@1']);
    assert.match(printed.join('\n'), /FAIL task 1: score 0\.5/);
    const webrl = await readAsWebrl(join(dir, 'random'));
    assert.equal(webrl.get('1')?.score, 0.5);
    assert.equal(webrl.get('1')?.rows.length, 3);
  });

  test('the oracle policy refuses tasks without a plan', async () => {
    const tasksFile = join(dir, 'noplan.json');
    await writeFile(tasksFile, JSON.stringify([{ task_id: 'a', intent: 'x', start_url: 'http://127.0.0.1:9/' }]));
    await assert.rejects(rollout(['--tasks', tasksFile, '--out', join(dir, 'noplan')]), /needs an oracle plan; tasks without one: a/);
  });

  test('--split runs the embedded tasks on the embedded sites, scored by their evaluators', async () => {
    const out = join(dir, 'embedded');
    const printed = await rollout(['--split', 'test', '--site', 'reddit', '--limit', '3', '--policy', 'oracle', '--concurrency', '2', '--out', out]);
    const outcomes = (await readFile(join(out, 'outcomes.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as EpisodeOutcome);
    assert.equal(outcomes.length, 3, printed.join('\n'));
    assert.equal(outcomes.filter((o) => o.infraFailure).length, 0);
    // The oracle's plans solve the embedded tasks; the evaluators (not the static environment) say so.
    assert.match(printed.join('\n'), /3 episodes: 3 passed/);
    assert.equal((await readdir(join(out, 'traces'))).length, 3);
  });

  test('--policy actor runs a trained ONNX actor checkpoint', async () => {
    const checkpoint = join(dir, 'actor.onnx');
    await train({
      objective: 'actor-sft',
      data: { records: await demonstrations(TRAIN_TASKS.slice(0, 4)) },
      outPath: checkpoint,
      seed: 1,
      steps: 3,
      batchSize: 8,
      hidden: 4,
    });
    const out = join(dir, 'actor');
    const printed = await rollout([
      '--split',
      'test',
      '--site',
      'shopping',
      '--limit',
      '2',
      '--policy',
      'actor',
      '--checkpoint',
      checkpoint,
      '--max-steps',
      '2',
      '--out',
      out,
    ]);
    assert.match(printed.join('\n'), /2 episodes: \d passed, mean score [\d.]+, 0 infrastructure failures/);
    const [trace] = await readdir(join(out, 'traces'));
    const rows = await readTraceFile(join(out, 'traces', trace!));
    // The actor answers in the WebRL grammar: every row's response parses as an action.
    assert.ok(rows.length > 0 && rows.every((row) => row.action !== null && row.parse_error === null), JSON.stringify(rows.map((r) => r.response)));
  });

  test('task sources and the actor policy are checked before anything starts', async () => {
    await assert.rejects(rollout(['--out', join(dir, 'none')]), /give one of --tasks FILE, --split train\|test or --miniwob \[types\]/);
    await assert.rejects(
      rollout(['--miniwob', 'drag-box', '--out', join(dir, 'drag')]),
      /--miniwob: task type drag-box is left out of the text subset: needs dragging/,
    );
    await assert.rejects(rollout(['--miniwob', 'no-such-task', '--out', join(dir, 'nosuch')]), /--miniwob: miniwob has no task type no-such-task/);
    await assert.rejects(rollout(['--miniwob', '--miniwob-seeds', '5:5', '--out', join(dir, 'seeds')]), /expected FROM:TO with TO > FROM/);
    await assert.rejects(rollout(['--split', 'dev', '--out', join(dir, 'dev')]), /--split must be train or test, got dev/);
    await assert.rejects(rollout(['--split', 'test', '--site', 'wiki', '--out', join(dir, 'wiki')]), /unknown site wiki/);
    await assert.rejects(rollout(['--split', 'test', '--policy', 'actor', '--limit', '1', '--out', join(dir, 'nockpt')]), /--policy actor needs --checkpoint/);
  });
});
