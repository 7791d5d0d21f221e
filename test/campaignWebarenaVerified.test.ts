/**
 * A campaign with `harness: webarena-verified` on the real stack, against the embedded sites served as
 * a separate deployment (`webrl env serve`), on tasks exported in WebArena-Verified's format
 * (`webrl env export --format webarena-verified`): SFT on the oracle plans (which end with the JSON
 * response), then one RL phase on the train file. Every score is the official evaluator's (the PyPI
 * package, through its long-lived process), each episode's network trace is stored beside its trace,
 * and the sites are reset before each evaluation through an env-ctrl service this test serves.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@temporalio/client';
import { startCampaign } from '../campaign/control';
import { writeHtmlReport } from '../campaign/htmlReport';
import { parseConfig } from '../config/load';
import type { TrajectoryRecord } from '../activities/campaign/episodes';
import { sharedVerifiedEvaluator } from '../env/evaluators/verified/client';
import { EMBEDDED_SITE_NAMES, type EmbeddedSiteName } from '../env/siteUrls';
import { ArtifactStore } from '../storage/artifactStore';
import { runWorkers } from '../workers/run';
import type { CampaignProgress } from '../workflows/campaignTypes';
import { tinyCampaignConfig } from './harness/campaign';
import { runWebrl } from './harness/cli';
import { serveSites, servedSiteSettings, type ServedSites } from './harness/servedSites';
import { startTestStack, type TestStack } from './harness/stack';

const NAME = 'webarena-verified';

/** An env-ctrl service for one site, as WebArena-Verified's images run it: restart (the site's reset), status. */
async function envCtrl(served: ServedSites, site: EmbeddedSiteName, calls: string[]): Promise<{ url: string; server: Server }> {
  const server = createServer((request, response) => {
    void (async () => {
      calls.push(`${site} ${request.method} ${request.url}`);
      let ok = false;
      if (request.method === 'POST' && request.url === '/restart?wait=1') ok = (await fetch(`${served.origins[site]}/__webrl/reset`, { method: 'POST' })).ok;
      else if (request.method === 'GET' && request.url === '/status') ok = (await fetch(`${served.origins[site]}/__webrl/health`)).ok;
      response.writeHead(ok ? 200 : 500, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ success: ok, message: ok ? 'ok' : 'failed', details: {} }));
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

describe('a campaign scored by the WebArena-Verified harness', () => {
  let stack: TestStack;
  let client: Client;
  let served: ServedSites;
  let dir: string;
  const controls: Server[] = [];
  const savedEnv = { ...process.env };

  before(async () => {
    [stack, served, dir] = await Promise.all([startTestStack(), serveSites(), mkdtemp(join(tmpdir(), 'webrl-verified-'))]);
    client = await stack.client();
    Object.assign(process.env, served.credentials);
    // Task files as a user exports them, cut to a few tasks per site.
    for (const [split, perSite] of [
      ['train', 1],
      ['test', 1],
    ] as const) {
      const file = join(dir, `${split}.json`);
      const result = await runWebrl(['env', 'export', '--split', split, '--format', 'webarena-verified', '--out', file]);
      assert.equal(result.code, 0, result.output);
      const tasks = JSON.parse(await readFile(file, 'utf8')) as { sites: string[] }[];
      await writeFile(file, JSON.stringify(EMBEDDED_SITE_NAMES.flatMap((site) => tasks.filter((t) => t.sites.join() === site).slice(0, perSite))));
    }
  });
  after(async () => {
    process.env = savedEnv;
    for (const server of controls) server.close();
    (await sharedVerifiedEvaluator()).close();
    await served?.stop();
    await stack?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test('SFT and one RL phase, every score from the official evaluator, the network traces stored, env-ctrl resets', async () => {
    const calls: string[] = [];
    const sites: Record<string, unknown> = servedSiteSettings(served);
    for (const site of EMBEDDED_SITE_NAMES) {
      const control = await envCtrl(served, site, calls);
      controls.push(control.server);
      sites[site] = { ...(sites[site] as object), reset: { hook: { kind: 'env-ctrl', url: control.url }, policy: 'beforeEvaluation' } };
    }
    const base = await tinyCampaignConfig(stack, NAME, { phases: 1 });
    const { testTasks, demonstrationTasks, maxSteps, episodeDeadlineSeconds } = base.campaign.environment;
    const config = parseConfig({
      ...base,
      campaign: {
        ...base.campaign,
        phase: { ...base.campaign.phase, curriculum: false },
        environment: {
          backend: 'webarena',
          webarena: {
            sites,
            harness: 'webarena-verified',
            tasks: { train: { path: join(dir, 'train.json') }, test: { path: join(dir, 'test.json') } },
            healthCheck: { attempts: 2, intervalSeconds: 0.2, timeoutSeconds: 5 },
          },
          testTasks,
          demonstrationTasks,
          maxSteps,
          episodeDeadlineSeconds,
          screenshotRate: 0,
        },
      },
    });
    const stop = new AbortController();
    const workers = runWorkers({ config, secrets: stack.secrets }, ['control', 'browser', 'train'], stop.signal);
    const store = new ArtifactStore(config.s3, stack.secrets.s3);
    try {
      const handle = await startCampaign(client, store, config);
      const final = (await client.workflow.getHandle(handle.workflowId).result()) as CampaignProgress;
      assert.equal(final.status, 'completed', JSON.stringify(final.failure));
      assert.deepEqual(
        final.history.map((h) => h.phase),
        [0, 1],
      );

      const records: { key: string; record: TrajectoryRecord }[] = [];
      for await (const { key } of store.list(`campaigns/${NAME}/`)) {
        if (/\/trajectories\/[^/]+\.json$/.test(key)) records.push({ key, record: await store.getJson<TrajectoryRecord>(key) });
      }
      const oracle = records.filter((r) => r.key.includes('/phase-0/demonstrations/oracle/'));
      assert.ok(oracle.length > 0 && records.length > oracle.length, 'oracle demonstrations and the actor episodes');
      for (const { key, record } of records) {
        // The official evaluator's verdict, per evaluator, and a score that follows it.
        const evaluation = record.evaluation ?? {};
        assert.match(String(evaluation.evaluators), /^AgentResponseEvaluator: (success|failure)/, `${key}: ${JSON.stringify(evaluation)}`);
        assert.equal(record.score, evaluation.status === 'success' ? 1 : 0, `${key}: ${JSON.stringify(evaluation)}`);
        // The network trace beside the trace: a HAR of the episode's requests, without cookies.
        const harKey = record.files?.['network.har'];
        assert.ok(harKey, `${key} stored no network trace`);
        const har = await store.getJson<{ log: { entries: { request: { url: string; headers: { name: string }[] } }[] } }>(harKey);
        assert.ok(
          har.log.entries.some((entry) => entry.request.url.startsWith(served.origins[record.site as EmbeddedSiteName])),
          `${harKey} has no request to ${record.site}`,
        );
        for (const entry of har.log.entries) assert.ok(!entry.request.headers.some((h) => /cookie/i.test(h.name)), `${harKey} keeps a cookie`);
      }
      for (const { record } of oracle) assert.equal(record.score, 1, `the oracle failed ${record.taskId}: ${JSON.stringify(record.evaluation)}`);

      // The HTML report's trajectory pages link each network trace, copied beside them.
      const report = await writeHtmlReport(store, NAME, join(dir, 'report'));
      const pages = await readdir(join(dir, 'report', 'trajectories'));
      assert.ok(report && report.trajectories > 0 && pages.length === report.trajectories);
      const linked = await Promise.all(
        pages.map(
          async (page) =>
            /<a href="\.\.\/(files\/[^"]+network\.har)">network\.har<\/a>/.exec(await readFile(join(dir, 'report', 'trajectories', page), 'utf8'))?.[1],
        ),
      );
      assert.ok(linked.every(Boolean), 'every trajectory page links its network trace');
      for (const file of linked) assert.ok(JSON.parse(await readFile(join(dir, 'report', file!), 'utf8')).log.entries.length > 0);

      // Each site was restarted before each evaluation (phases 0 and 1), each restart followed by its status.
      for (const site of EMBEDDED_SITE_NAMES) {
        assert.deepEqual(
          calls.filter((call) => call.startsWith(`${site} `)),
          Array.from({ length: 2 }, () => [`${site} POST /restart?wait=1`, `${site} GET /status`]).flat(),
        );
      }
    } finally {
      stop.abort();
      await workers;
      store.destroy();
    }
  });
});
