import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EpisodeOutcome, EpisodeStep } from '../../browser/episodeRecord';
import { LocalTraceSink, parseTraceJsonl, readTraceFile, toTraceRows } from '../../browser/traces';

let dir: string;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'webrl-traces-test-'));
});

after(async () => {
  await rm(dir, { recursive: true, force: true });
});

const STEPS: EpisodeStep[] = [
  {
    index: 0,
    url: 'http://127.0.0.1/a',
    html: '<html> <a id="0"> Go </a> </html>',
    prompt: 'Task Instruction: find it\n\nRound 0 ...',
    response: '# Element: Go\ndo(action="Click", element="0")',
    action: { kind: 'Click', element: 0 },
    parseError: null,
    execution: { ok: true },
    timings: { observeMs: 12.345, policyMs: 0.2, actionMs: 30.04, settleMs: 40.5 },
  },
  {
    index: 1,
    url: 'http://127.0.0.1/b',
    html: '<html> </html>',
    prompt: 'Task Instruction: find it\n\nRound 0 ... Round 1 ...',
    response: 'exit(message="42")',
    action: { kind: 'exit', message: '42' },
    parseError: null,
    execution: null,
    timings: { observeMs: 9, policyMs: 0.1, actionMs: 0, settleMs: 0 },
  },
];

const OUTCOME: EpisodeOutcome = {
  taskId: 7,
  traceId: 'task/7',
  score: 1,
  steps: 2,
  answer: '42',
  infraFailure: false,
  reason: 'exit',
  durationMs: 123,
};

describe('traces', () => {
  test('rows carry the WebRL fields first, our step fields, and the episode result on every row', () => {
    const rows = toTraceRows('task/7', 'find it', STEPS, OUTCOME);
    assert.deepEqual(rows[0], {
      trace_id: 'task/7',
      index: 0,
      prompt: 'find it',
      html: '<html> <a id="0"> Go </a> </html>',
      response: '# Element: Go\ndo(action="Click", element="0")',
      target: 'find it',
      task_id: 7,
      url: 'http://127.0.0.1/a',
      model_prompt: 'Task Instruction: find it\n\nRound 0 ...',
      action: { kind: 'Click', element: 0 },
      parse_error: null,
      execution: { ok: true },
      timings: { observe_ms: 12.3, policy_ms: 0.2, action_ms: 30, settle_ms: 40.5 },
      score: 1,
      answer: '42',
      reason: 'exit',
      infra_failure: false,
      final: false,
    });
    assert.equal(rows[1]!.prompt, '** Simplified html **');
    assert.equal(rows[1]!.final, true);
  });

  test('the local sink writes one JSONL file per trajectory that reads back', async () => {
    const sink = new LocalTraceSink(dir);
    async function* rows() {
      yield* toTraceRows('task/7', 'find it', STEPS, OUTCOME);
    }
    const { key } = await sink.writeTrajectory('task/7', rows());
    assert.equal(key, 'task_7.jsonl');
    const read = await readTraceFile(join(dir, key));
    assert.deepEqual(read, toTraceRows('task/7', 'find it', STEPS, OUTCOME));
    const shot = await sink.writeScreenshot('task/7', 1, new Uint8Array([0x89, 0x50, 0x4e, 0x47]));
    assert.equal(shot.key, 'task_7/step-1.png');
    assert.deepEqual([...(await readFile(join(dir, shot.key)))], [0x89, 0x50, 0x4e, 0x47]);
    assert.deepEqual((await readdir(dir)).sort(), ['task_7', 'task_7.jsonl'], 'no temporary files are left');
  });

  test('plain WebRL trace files read, with a numeric trace_id', async () => {
    const webrl = [
      {
        trace_id: 12,
        index: 0,
        prompt: 'Show me the orders',
        html: '<html> </html>',
        response: 'do(action="Click", element="2")',
        target: 'Show me the orders',
      },
      { trace_id: 12, index: 1, prompt: '** Simplified html **', html: '<html> </html>', response: 'exit(message="")', target: 'Show me the orders' },
    ];
    const file = join(dir, 'webrl.jsonl');
    await writeFile(file, webrl.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const rows = await readTraceFile(file);
    assert.deepEqual(
      rows,
      webrl.map((r) => ({ ...r, trace_id: '12' })),
    );
    assert.equal(rows[1]!.score, undefined);
  });

  test('a malformed line is reported with its number', () => {
    assert.throws(
      () => parseTraceJsonl('{"trace_id":"a","index":0,"prompt":"p","html":"h","response":"r","target":"t"}\n{"trace_id":"a"}\n'),
      /line 2 is not a WebRL trace row/,
    );
    assert.throws(() => parseTraceJsonl('not json\n'), /line 1 is not JSON/);
  });
});
