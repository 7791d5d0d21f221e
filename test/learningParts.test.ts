/**
 * bench:learning's parts: a finished part's file round-trips, a file that is not a part is refused with
 * its fields named, and parts pool into the seed runs the figures are computed from only when they ran
 * under the same settings.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { poolParts, readPart, seedPart, settingsFingerprint, writePart, ZERO_SHOT_PART, type LearningPart } from '../bench/learningParts';

const settings = settingsFingerprint('campaign: {}\n', 'cpu', {});
const scores = (...values: number[]) => values.map((score, i) => ({ taskId: `miniwob/click-button/${10_000 + i}`, score }));
const seed = (n: number, overrides: Partial<LearningPart> = {}): LearningPart => ({
  part: seedPart(n),
  settings,
  commit: 'abc123',
  seconds: 100,
  phases: [scores(1, 0), scores(1, 1)],
  ...overrides,
});
const zeroShot: LearningPart = { part: ZERO_SHOT_PART, settings, commit: 'abc123', seconds: 10, zeroShot: scores(0, 0) };

test('a finished part is read back as written; an unfinished one is absent', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'learning-parts-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  assert.equal(await readPart(dir, 'seed-1'), undefined);
  const file = await writePart(dir, seed(1));
  assert.equal(file, join(dir, 'seed-1.json'));
  assert.deepEqual(await readPart(dir, 'seed-1'), seed(1));
});

test('a file that is not a part is refused, each problem with its field', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'learning-parts-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await writeFile(
    join(dir, 'seed-2.json'),
    JSON.stringify({ part: 'seed-2', settings: 'short', commit: 'x', seconds: -1, phases: [[{ taskId: 't', score: 2 }]] }),
  );
  await assert.rejects(readPart(dir, 'seed-2'), (error: Error) => {
    for (const field of ['settings', 'seconds', 'phases.0.0.score']) assert.match(error.message, new RegExp(`${field.replaceAll('.', '\\.')}:`));
    return true;
  });
  await writePart(dir, seed(1));
  await writeFile(join(dir, 'seed-3.json'), JSON.stringify(seed(1)));
  await assert.rejects(readPart(dir, 'seed-3'), /holds the part seed-1, not seed-3/);
});

test('parts pool into seed runs, the first seed carrying the zero-shot scores, only under one set of settings', () => {
  const runs = poolParts([seed(1), zeroShot, seed(2, { commit: 'def456' })], [1, 2]);
  assert.deepEqual(runs, [{ phases: seed(1).phases, zeroShot: zeroShot.zeroShot }, { phases: seed(2).phases }]);
  const other = settingsFingerprint('campaign: {}\n', 'gpu', {});
  assert.notEqual(other, settings, 'the size is part of the settings');
  assert.throws(() => poolParts([seed(1), zeroShot, seed(2, { settings: other })], [1, 2]), /ran under different settings/);
  assert.throws(() => poolParts([seed(1), seed(2)], [1, 2]), /zero-shot part has no scores/);
  assert.throws(() => poolParts([seed(1), zeroShot], [1, 2]), /seed-2 part has no evaluations/);
});
