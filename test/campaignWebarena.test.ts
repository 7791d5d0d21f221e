/**
 * A campaign in `webarena` mode on the real stack, against the embedded sites served as a separate
 * deployment (`webrl env serve` in its own process): the SFT phase signs in to the sites, its oracle
 * demonstrations write to their shared state, and the reset before evaluation (an HTTP hook on three
 * sites, a shell command on reddit) drops what they wrote, as the served sites themselves report.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@temporalio/client';
import { startCampaign } from '../campaign/control';
import { parseConfig } from '../config/load';
import { EMBEDDED_SITE_NAMES } from '../env/site-urls';
import { ArtifactStore } from '../storage/artifactStore';
import { runWorkers } from '../workers/run';
import type { CampaignProgress } from '../workflows/campaignTypes';
import { tinyCampaignConfig } from './harness/campaign';
import { runWebrl } from './harness/cli';
import { serveSites, servedSiteSettings, type ServedSites } from './harness/servedSites';
import { startTestStack, type TestStack } from './harness/stack';

describe('a webarena-mode campaign against served sites', () => {
  let stack: TestStack;
  let client: Client;
  let served: ServedSites;
  let dir: string;
  const savedEnv = { ...process.env };

  before(async () => {
    [stack, served, dir] = await Promise.all([startTestStack(), serveSites(), mkdtemp(join(tmpdir(), 'webrl-wa-campaign-'))]);
    client = await stack.client();
    Object.assign(process.env, served.credentials);
    for (const split of ['train', 'test']) {
      const result = await runWebrl(['env', 'export', '--split', split, '--out', join(dir, `${split}.json`)]);
      assert.equal(result.code, 0, result.output);
    }
  });
  after(async () => {
    process.env = savedEnv;
    await served?.stop();
    await stack?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test('phase 0 signs in, writes to the shared sites, and the reset before evaluation drops it', async () => {
    const tiny = await tinyCampaignConfig(stack, 'webarena-sft', { phases: 0 });
    const reset = (site: string) =>
      site === 'reddit'
        ? { hook: { command: `curl -sf -X POST ${served.origins.reddit}/__webrl/reset > /dev/null` }, policy: 'beforeEvaluation' }
        : { hook: { http: { url: `${served.origins[site as 'shopping']}/__webrl/reset` } }, policy: 'beforeEvaluation' };
    const config = parseConfig({
      ...tiny,
      campaign: {
        ...tiny.campaign,
        phase: { ...tiny.campaign.phase, curriculum: false },
        environment: {
          ...tiny.campaign.environment,
          demonstrationTasks: 8,
          backend: 'webarena',
          webarena: {
            sites: servedSiteSettings(served, (site) => ({ reset: reset(site), maxConcurrentEpisodes: 2 })),
            tasks: { train: { path: join(dir, 'train.json') }, test: { path: join(dir, 'test.json') } },
          },
        },
      },
    });
    const store = new ArtifactStore(config.s3, stack.secrets.s3);
    const stop = new AbortController();
    const workers = runWorkers({ config, secrets: stack.secrets }, ['control', 'browser', 'train'], stop.signal);
    try {
      const handle = await startCampaign(client, store, config);
      const final = (await handle.result()) as CampaignProgress;
      assert.equal(final.status, 'completed');
      assert.equal(final.history.length, 1);

      const output = served.process.output();
      // Login happened on the sites (server side), and no password reached their log or the history.
      for (const site of EMBEDDED_SITE_NAMES) {
        const health = await served.health(site);
        assert.ok(health.logins > 0, `no login on ${site}`);
        assert.equal(health.resets, 1, `one reset of ${site}, before the evaluation`);
      }
      // The oracle demonstrations wrote to the shared state; the reset before evaluation dropped it.
      const dropped = [...output.matchAll(/reset (\w+): seeded state restored \((\d+) changed rows dropped\)/g)].map((m) => Number(m[2]));
      assert.equal(dropped.length, EMBEDDED_SITE_NAMES.length);
      assert.ok(dropped.some((rows) => rows > 0), `no site had rows to drop:\n${output}`);
      const history = JSON.stringify(await handle.fetchHistory());
      for (const password of served.passwords) {
        assert.ok(!history.includes(password), 'a password in the history');
        assert.ok(!output.includes(password), 'a password in the sites log');
      }
      assert.match(history, /prepareEnvironment/);
    } finally {
      stop.abort();
      await workers;
      store.destroy();
    }
  });
});
