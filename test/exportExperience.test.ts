/**
 * Training records outside the workflow: `webrl schema training-record` prints the JSON Schema of the
 * zod type; `webrl export` writes a published phase's experience as training records or as the
 * file WebRL's trainer loads (checked by a script that mirrors its loader), with WebRL's Monte-Carlo returns.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { ExperienceRow } from '../activities/campaign/experience';
import { phaseManifestKey } from '../storage/keys';
import { buildPrompt } from '../browser/policies/prompt';
import type { ModelState } from '../models/state';
import { monteCarloReturnWebRL, trainingRecordSchema, trainingRecordsKey, type TrainingStepRecord } from '../models/train/trainingRecord';
import { ensureTrainerEnvironment, packageDir } from '../trainers/torch/environment';
import { startTestStack, type TestStack } from './harness/stack';

const execFileAsync = promisify(execFile);
const WEBRL = fileURLToPath(new URL('../bin/webrl.js', import.meta.url));
const CHECK_WEBRL_FILE = join(packageDir, 'tools', 'check_webrl_file.py');

/** What trainers/torch/tools/check_webrl_file.py prints. */
interface WebRLFileSummary {
  layout: 'steps' | 'trajectories';
  entries: number;
  train_steps: number;
  validation_steps: number;
  batches: number;
  tasks: string[];
  first_action: string | null;
  mc_return_stored_vs_recomputed: number | null;
}

const state = (intent: string, history: string[], html: string): ModelState =>
  ({
    intent,
    history: history.map((response) => ({ response, action: null })),
    observation: { url: 'http://127.0.0.1/', title: 'p', html, elements: [] },
  }) as unknown as ModelState;

/** The prompt of a phase stored without records: its actor read the released checkpoints' prompt. */
const llama3 = (state: ModelState) =>
  buildPrompt(
    state.intent,
    state.history.map((round) => round.response),
    state.observation.html,
  );

describe('training records and their export', () => {
  let stack: TestStack;
  before(async () => {
    stack = await startTestStack();
  });
  after(() => stack?.stop());

  test("WebRL's Monte-Carlo return: every step carries the trajectory's score, discounted from each step on", () => {
    assert.deepEqual(
      [0, 1, 2].map((t) => monteCarloReturnWebRL(1, t, 3, 0.5)),
      [1.75, 1.5, 1],
    );
    assert.deepEqual(
      [0, 1].map((t) => monteCarloReturnWebRL(0, t, 2, 0.9)),
      [0, 0],
    );
  });

  test('webrl schema training-record prints the JSON Schema generated from the zod type', async () => {
    const { stdout } = await execFileAsync(process.execPath, [WEBRL, 'schema', 'training-record']);
    const schema = JSON.parse(stdout) as { oneOf: { properties: Record<string, { const?: unknown }>; required: string[] }[] };
    const [step, orm] = schema.oneOf;
    assert.deepEqual(Object.keys(step!.properties).sort(), [
      'campaignId',
      'done',
      'id',
      'kind',
      'mcReturn',
      'nextPrompt',
      'phase',
      'prompt',
      'rank',
      'refLogprob',
      'response',
      'responseTokens',
      'reward',
      'schemaVersion',
      'source',
      'state',
      'step',
      'taskId',
      'traceId',
    ]);
    assert.equal(step!.properties.schemaVersion!.const, 1);
    assert.deepEqual(Object.keys(orm!.properties).sort(), ['campaignId', 'id', 'kind', 'phase', 'prompt', 'response', 'schemaVersion', 'taskId', 'traceId']);
  });

  test("webrl export writes a phase as training records and as the file WebRL's trainer loads (trajectories, or steps for a _filter name), shuffled by the seed", async () => {
    const campaign = 'export-test';
    const key = `campaigns/${campaign}/phase-1/experience.jsonl`;
    const s0 = state('buy milk', [], '<html>zero</html>');
    const s1 = state('buy milk', ['do(action="Click", element="1")'], '<html>one</html>');
    const rows: ExperienceRow[] = [
      {
        taskId: '7',
        state: s0,
        response: 'do(action="Click", element="1")',
        nextState: s1,
        reward: 0,
        mcReturn: 0.9,
        traceId: 't7',
        step: 0,
        steps: 2,
        trajectoryReward: 1,
      },
      {
        taskId: '7',
        state: s1,
        response: 'exit(message="done")',
        nextState: null,
        reward: 1,
        mcReturn: 1,
        traceId: 't7',
        step: 1,
        steps: 2,
        trajectoryReward: 1,
      },
      {
        taskId: '8',
        state: state('buy tea', [], '<html>tea</html>'),
        response: 'exit(message="no tea")',
        nextState: null,
        reward: 0,
        mcReturn: 0,
        traceId: 't8',
        step: 0,
        steps: 1,
        trajectoryReward: 0,
      },
      {
        taskId: '9',
        state: state('buy jam', [], '<html>jam</html>'),
        response: 'exit(message="jam")',
        nextState: null,
        reward: 1,
        mcReturn: 1,
        traceId: 't9',
        step: 0,
        steps: 1,
        trajectoryReward: 1,
      },
      {
        taskId: '3',
        state: state('sell eggs', [], '<html>r</html>'),
        response: 'exit(message="N/A")',
        nextState: null,
        reward: 1,
        mcReturn: 1,
        traceId: 't3',
        step: 0,
        steps: 1,
        trajectoryReward: 1,
      },
    ];
    const info = await stack.store.writeJsonl(key, rows);
    await stack.store.publishManifest(phaseManifestKey(campaign, 1), [info], {
      campaignId: campaign,
      phase: 1,
      summary: { replayedSteps: 1 },
      artifacts: { experience: { key, count: 5, sha256: info.sha256 } },
    });
    const configFile = join(stack.dir, 'export.json');
    await writeFile(configFile, JSON.stringify({ ...stack.config, campaign: { ...stack.config.campaign, name: campaign } }));
    const env = { ...process.env, ...stack.env };

    const recordsFile = join(stack.dir, 'records.jsonl');
    await execFileAsync(process.execPath, [WEBRL, 'export', '-c', configFile, '--phase', '1', '--format', 'records', '-o', recordsFile], { env });
    const records = (await readFile(recordsFile, 'utf8'))
      .trim()
      .split('\n')
      .map((line) => trainingRecordSchema.parse(JSON.parse(line)) as TrainingStepRecord);
    assert.deepEqual(
      records.map((r) => [r.id, r.source, r.done, r.reward]),
      [
        ['t7:0', 'rollout', false, 0],
        ['t7:1', 'rollout', true, 1],
        ['t8:0', 'rollout', true, 0],
        ['t9:0', 'rollout', true, 1],
        ['t3:0', 'replay', true, 1],
      ],
    );
    assert.equal(records[0]!.prompt, llama3(s0));
    assert.equal(records[0]!.nextPrompt, llama3(s1));
    assert.ok(Math.abs(records[0]!.mcReturn - 1.9) < 1e-12);
    assert.equal(records[0]!.refLogprob, null, 'an embedded phase has no server log-probs');

    // The file WebRL's trainer loads, read by a script that mirrors its loader and imports nothing from here.
    const python = ensureTrainerEnvironment();
    const check = async (file: string) => JSON.parse((await execFileAsync(python, [CHECK_WEBRL_FILE, file])).stdout) as WebRLFileSummary;
    const webrlFile = join(stack.dir, 'phase-1.pt');
    await execFileAsync(process.execPath, [WEBRL, 'export', '-c', configFile, '--phase', '1', '--format', 'webrl', '-o', webrlFile], { env });
    const trajectories = await check(webrlFile);
    // Three trajectories of this phase (the replayed step belongs to an older one), WebRL's 95% split over
    // them: two train, one validates. Its recomputed returns are the ones exported.
    assert.equal(trajectories.layout, 'trajectories');
    assert.equal(trajectories.entries, 3);
    assert.equal(trajectories.train_steps + trajectories.validation_steps, 4);
    assert.equal(trajectories.batches, trajectories.train_steps);
    assert.ok(trajectories.mc_return_stored_vs_recomputed! < 1e-9);
    assert.ok(trajectories.first_action!.endsWith('<|eot_id|>'));
    assert.deepEqual([...new Set(trajectories.tasks)].sort(), ['buy jam', 'buy milk', 'buy tea']);
    // Shuffled by the campaign's seed: the same order every time.
    await execFileAsync(process.execPath, [WEBRL, 'export', '-c', configFile, '--phase', '1', '--format', 'webrl', '-o', webrlFile], { env });
    assert.deepEqual((await check(webrlFile)).tasks, trajectories.tasks);

    const filterFile = join(stack.dir, 'phase-1_filter.pt');
    await execFileAsync(process.execPath, [WEBRL, 'export', '-c', configFile, '--phase', '1', '--format', 'webrl', '-o', filterFile], { env });
    const steps = await check(filterFile);
    assert.equal(steps.layout, 'steps');
    assert.equal(steps.entries, 5);
    assert.deepEqual([steps.train_steps, steps.validation_steps], [4, 1]);
    assert.deepEqual([...steps.tasks].sort(), ['buy jam', 'buy milk', 'buy milk', 'buy tea', 'sell eggs']);

    await assert.rejects(
      execFileAsync(process.execPath, [WEBRL, 'export', '-c', configFile, '--phase', '4', '-o', webrlFile], { env }),
      /has no published phase 4/,
    );

    // Stored records that are not the experience rows, one each, are refused with what is wrong; nothing is written.
    const stored = trainingRecordsKey(key);
    const damaged: Array<[TrainingStepRecord[], RegExp]> = [
      [records.slice(0, 4), /holds 4 training records but .*experience\.jsonl holds 5 experience rows/],
      [[...records, records[4]!], /holds 6 training records but .*experience\.jsonl holds 5 experience rows/],
      [[records[0]!, { ...records[1]!, step: 0 }, ...records.slice(2)], /lines 1 and 2 are both step 0 of trace t7/],
    ];
    for (const [lines, refusal] of damaged) {
      await stack.store.writeJsonl(stored, lines);
      const out = join(stack.dir, 'damaged.pt');
      await assert.rejects(
        execFileAsync(process.execPath, [WEBRL, 'export', '-c', configFile, '--phase', '1', '--format', 'webrl', '-o', out], { env }),
        (error: { stderr: string; code: number }) => {
          assert.equal(error.code, 1);
          assert.match(error.stderr, refusal);
          assert.doesNotMatch(error.stderr, /\n\s+at /, 'one line, no stack trace');
          return true;
        },
      );
      assert.ok(!existsSync(out));
    }
    // A usage error exits 2, as the README says.
    await assert.rejects(
      execFileAsync(process.execPath, [WEBRL, 'export', '-c', configFile, '--phase', '1', '--format', 'foo', '-o', webrlFile], { env }),
      (error: { stderr: string; code: number }) => {
        assert.equal(error.code, 2);
        assert.match(error.stderr, /--format must be records or webrl, got 'foo'/);
        return true;
      },
    );
  });
});
