/**
 * The patch ledger (workflows/patches.ts) against the workflow code and the recorded histories: every
 * patch call in workflows/ is in the ledger at the stage its call says (patched or deprecatePatch), and
 * every ledger entry is still called; each fixture the ledger says pins an old branch exists and has no
 * marker of that patch, and a deprecated patch pins none (its old branch is gone); each patch's new
 * branch is pinned by at least one fixture that has its marker. The histories replay in replay.test.ts.
 */
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { CAMPAIGN_PATCHES } from '../workflows/patches';

const WORKFLOWS = fileURLToPath(new URL('../workflows/', import.meta.url));
const FIXTURES = fileURLToPath(new URL('./fixtures/histories/', import.meta.url));

interface HistoryEvent {
  markerRecordedEventAttributes?: { markerName?: string; details?: Record<string, { payloads?: { data?: string }[] }> };
}

/** The patch ids whose markers a recorded history holds. */
async function markers(file: string): Promise<Set<string>> {
  const history = JSON.parse(await readFile(`${FIXTURES}${file}`, 'utf8')) as { events: HistoryEvent[] };
  const ids = new Set<string>();
  for (const event of history.events) {
    const marker = event.markerRecordedEventAttributes;
    const data = marker?.markerName === 'core_patch' ? marker.details?.['patch-data']?.payloads?.[0]?.data : undefined;
    if (data) ids.add((JSON.parse(Buffer.from(data, 'base64').toString('utf8')) as { id: string }).id);
  }
  return ids;
}

test('every patch in the workflow code is in the ledger at its stage, and every ledger entry is in the code', async () => {
  const used = new Map<string, Set<string>>();
  for (const file of await readdir(WORKFLOWS)) {
    if (!file.endsWith('.ts')) continue;
    for (const match of (await readFile(`${WORKFLOWS}${file}`, 'utf8')).matchAll(/\b(patched|deprecatePatch)\('([^']+)'\)/g)) {
      used.set(match[2]!, (used.get(match[2]!) ?? new Set()).add(match[1] === 'patched' ? 'patched' : 'deprecated'));
    }
  }
  assert.deepEqual([...used.keys()].sort(), CAMPAIGN_PATCHES.map((p) => p.id).sort());
  for (const patch of CAMPAIGN_PATCHES) assert.deepEqual([...used.get(patch.id)!], [patch.stage], `${patch.id}: every call is at the ledger's stage`);
});

test("the ledger's fixtures pin each patch's old branch, and some fixture pins its new one", async () => {
  const files = (await readdir(FIXTURES)).filter((f) => f.endsWith('.json'));
  const byFile = new Map(await Promise.all(files.map(async (file) => [file, await markers(file)] as const)));
  for (const patch of CAMPAIGN_PATCHES) {
    if (patch.stage === 'deprecated') assert.deepEqual(patch.oldBranchFixtures, [], `${patch.id}: deprecated, so no old branch is left to pin`);
    for (const file of patch.oldBranchFixtures) {
      assert.ok(byFile.has(file), `${patch.id}: ${file} is not a recorded history`);
      assert.ok(!byFile.get(file)!.has(patch.id), `${patch.id}: ${file} has its marker, so it pins the new branch, not the old`);
    }
    assert.ok(
      [...byFile.values()].some((ids) => ids.has(patch.id)),
      `${patch.id}: no recorded history runs its new branch`,
    );
  }
});
