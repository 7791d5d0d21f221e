/**
 * A campaign with `harness: webarena-verified` on the real stack, against the embedded sites served as
 * a separate deployment (`webrl env serve`), on tasks exported in WebArena-Verified's format
 * (`webrl env export --format webarena-verified`): SFT on the oracle plans (which end with the JSON
 * response), then one RL phase on the train file. Every score is the official evaluator's (the PyPI
 * package, through its long-lived process), each episode's network trace is stored beside its trace,
 * and the sites are reset before each evaluation through an env-ctrl service this test serves.
 *
 * One more train task runs on a page that sends every kind of secret issue 57 found in stored traces
 * (test/harness/leakySite.ts), the campaign's own site password and S3 key among them: no object in
 * the bucket holds any of them, in any encoding, and every stored network trace scores as its episode did.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@temporalio/client';
import { writeHtmlReport } from '../campaign/htmlReport';
import { parseConfig } from '../config/load';
import type { WebArenaConfig } from '../env/backends/webarena/settings';
import { sharedVerifiedEvaluator } from '../env/evaluators/harnesses/verified/client';
import { agentResponse } from '../env/evaluators/harnesses/verified/harness';
import { EMBEDDED_SITE_NAMES, type EmbeddedSiteName, type SiteName } from '../env/siteUrls';
import { siteUrlsOf, webArenaSites } from '../env/webarena/sites';
import { runCampaignToEnd, tinyCampaignConfig } from './harness/campaign';
import { runWebrl } from './harness/cli';
import { serveSites, servedSiteSettings, type ServedSites } from './harness/servedSites';
import { startTestStack, type TestStack } from './harness/stack';
import { serveLeakySite, type LeakySite } from './harness/leakySite';
import { foundSecret } from './harness/secretForms';
import { REDACTED, REDACTED_IN_URL } from '../storage/scrub';

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
  let leaky: LeakySite;
  const controls: Server[] = [];
  const savedEnv = { ...process.env };

  before(async () => {
    [stack, served, dir] = await Promise.all([startTestStack(), serveSites(), mkdtemp(join(tmpdir(), 'webrl-verified-'))]);
    client = await stack.client();
    Object.assign(process.env, served.credentials);
    leaky = await serveLeakySite(served.passwords[0]!, stack.secretValues[1]!);
    // Task files as a user exports them, cut to a few tasks per site.
    for (const [split, perSite] of [
      ['train', 1],
      ['test', 1],
    ] as const) {
      const file = join(dir, `${split}.json`);
      const result = await runWebrl(['env', 'export', '--split', split, '--format', 'webarena-verified', '--out', file]);
      assert.equal(result.code, 0, result.output);
      const tasks = JSON.parse(await readFile(file, 'utf8')) as { sites: string[] }[];
      const picked = EMBEDDED_SITE_NAMES.flatMap((site) => tasks.filter((t) => t.sites.join() === site).slice(0, perSite));
      await writeFile(file, JSON.stringify(split === 'train' ? [...picked, leaky.task(90_001)] : picked));
    }
  });
  after(async () => {
    process.env = savedEnv;
    for (const server of controls) server.close();
    leaky?.close();
    (await sharedVerifiedEvaluator()).close();
    await served?.stop();
    await stack?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test('SFT and one RL phase, every score from the official evaluator, the network traces stored, env-ctrl resets', async () => {
    const calls: string[] = [];
    const sites: Record<string, unknown> = { ...servedSiteSettings(served), wikipedia: { url: leaky.url } };
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
    await runCampaignToEnd(stack, client, config, async ({ final, store, records }) => {
      assert.equal(final.status, 'completed', JSON.stringify(final.failure));
      assert.deepEqual(
        final.history.map((h) => h.phase),
        [0, 1],
      );

      const verifiedTasks = new Map<string, Record<string, unknown>>();
      for (const split of ['train', 'test']) {
        // The task as the harness hands it to the package: the file's own oracle plan is this project's field.
        for (const task of JSON.parse(await readFile(join(dir, `${split}.json`), 'utf8')) as { task_id: number }[])
          verifiedTasks.set(String(task.task_id), Object.fromEntries(Object.entries(task).filter(([field]) => field !== 'oracle')));
      }
      const evaluator = await sharedVerifiedEvaluator();
      const siteUrls = siteUrlsOf(webArenaSites((config.campaign.environment as { webarena: WebArenaConfig }).webarena));
      const leakyTraces: string[] = [];
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
        const har = await store.getJson<{ log: { entries: { request: { url: string; headers: { name: string; value: string }[] } }[] } }>(harKey);
        const origin = record.site === 'wikipedia' ? leaky.url : served.origins[record.site as EmbeddedSiteName];
        assert.ok(
          har.log.entries.some((entry) => entry.request.url.startsWith(origin)),
          `${harKey} has no request to ${record.site}`,
        );
        for (const entry of har.log.entries) {
          for (const header of entry.request.headers.filter((h) => /^cookie$/i.test(h.name))) {
            for (const cookie of header.value.split(';')) assert.ok(cookie.trim().endsWith(`=${REDACTED}`), `${harKey} keeps a cookie`);
          }
        }
        // Scored again from the stored (scrubbed) trace, the episode gets the verdict it got from the recorded one.
        const task = verifiedTasks.get(record.taskId);
        assert.ok(task, `no task ${record.taskId}`);
        const sites = Object.fromEntries((task.sites as SiteName[]).map((site) => [site, siteUrls[site]!]));
        const { result } = await evaluator.evaluate({ task, response: agentResponse(record.answer).response, entries: har.log.entries, sites });
        assert.equal(result.status, evaluation.status, `${key}: scored ${result.status} from the stored trace`);
        if (record.site === 'wikipedia') leakyTraces.push(JSON.stringify(har));
      }
      // The leaky page's requests were recorded, every one, and their secrets replaced.
      assert.ok(leakyTraces.length > 0, 'the leaky task ran');
      const demonstration = leakyTraces[0]!;
      for (const path of leaky.paths) assert.ok(demonstration.includes(`${leaky.url}${path}`), `the stored trace has no request to ${path}`);
      assert.ok(demonstration.includes(REDACTED) && demonstration.includes(REDACTED_IN_URL));

      // No object in the bucket holds a secret of the campaign's or of the leaky page's, in any encoding.
      const secrets = [...served.passwords, ...stack.secretValues, ...leaky.tokens];
      let scanned = 0;
      for await (const { key } of store.list('')) {
        const found = foundSecret((await store.getBytes(key)).toString('latin1'), secrets);
        assert.equal(found, undefined, `${key} holds ${found}`);
        scanned++;
      }
      assert.ok(scanned > records.length * 2, `only ${scanned} objects scanned`);
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

      // Each site's env-ctrl was probed once before the start (GET /status, nothing reset), then restarted
      // before each evaluation (phases 0 and 1), each restart followed by its status.
      for (const site of EMBEDDED_SITE_NAMES) {
        assert.deepEqual(
          calls.filter((call) => call.startsWith(`${site} `)),
          [`${site} GET /status`, ...Array.from({ length: 2 }, () => [`${site} POST /restart?wait=1`, `${site} GET /status`]).flat()],
        );
      }
    });
  });
});
