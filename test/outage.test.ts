/**
 * The main job rides out outages of its servers: the Temporal dev server SIGKILLed mid-campaign and
 * started again 20 s later, then MinIO likewise; the same `webrl campaign run` process finishes the
 * campaign, having said once per outage, in plain words, that it waits.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runWebrl, startWebrl } from './harness/cli';
import { serverOutage, writeMainJobCampaign, type MainJobCampaign } from './harness/mainJob';

const OUTAGE_MS = 20_000;
const CAMPAIGN_MS = 20 * 60_000;

describe('webrl campaign run through a Temporal and a MinIO outage', () => {
  let dir: string;
  let campaign: MainJobCampaign;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'webrl-outage-'));
    campaign = await writeMainJobCampaign(dir, { name: 'outages', seed: 3, phases: 1 });
  });
  after(async () => {
    await runWebrl(['stack', 'down', '-c', campaign.configFile], { cwd: dir });
    await rm(dir, { recursive: true, force: true });
  });

  test('the same process finishes the campaign and says once per outage that it waits', async () => {
    const job = startWebrl(['campaign', 'run', '-c', campaign.configFile, '-o', join(dir, 'chart.svg')], { cwd: dir });
    await job.waitFor(/^phase 0\/1 · running · trainSft/m, CAMPAIGN_MS);
    await serverOutage(campaign, 'temporal', OUTAGE_MS);
    // MinIO goes next, while whatever step follows the Temporal outage runs (on a loaded machine the
    // steps right after SFT may pass between two progress polls, so no particular one is awaited).
    await job.waitFor(/the Temporal server at .* is back after \d+ s\n(?:.*\n)*?phase \d\/1 · running · /, CAMPAIGN_MS);
    await serverOutage(campaign, 'minio', OUTAGE_MS);
    const { code, output } = await job.exited;
    assert.equal(code, 0, output);
    assert.match(output, /^campaign outages: completed, phase 1 of 1/m);
    assert.equal(output.match(/the Temporal server at 127\.0\.0\.1:\d+ does not answer; waiting for it to come back/g)?.length, 1, output);
    assert.equal(output.match(/storage at http:\/\/127\.0\.0\.1:\d+ does not answer; waiting for it to come back/g)?.length, 1, output);
    assert.match(output, /storage at .* is back after \d+ s/);
    // The attempts that failed while storage was away are told in plain words, once each.
    assert.match(output, /^\w+[^\n]*: attempt \d+, the last one failed: \S/m);
    assert.doesNotMatch(output, /ServiceError|^\s+at |DEADLINE_EXCEEDED/m);
  });
});
