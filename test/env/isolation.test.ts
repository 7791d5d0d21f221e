/**
 * Two concurrent episodes of the same state-changing task on the same site both pass, each sees
 * exactly its own change (never the other's), and a third, fresh episode sees neither.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';
import type { EpisodeEnvironment, PreparedEpisode } from '../../browser/contract';
import { runEpisode } from '../../browser/episode';
import { createOraclePolicy } from '../../browser/policies/oracle';
import { CHROMIUM_ARGS, ensureChromium } from '../../infra/tools';
import { EmbeddedEnvironment, toEpisodeTask } from '../../env/embedded';
import { startEmbeddedSites, type EmbeddedSites } from '../../env/embeddedSites';
import { generateSplits } from '../../env/tasks/generate';

let sites: EmbeddedSites;
let browser: Browser;
before(async () => {
  sites = await startEmbeddedSites();
  browser = await chromium.launch({ executablePath: (await ensureChromium()).path, args: CHROMIUM_ARGS });
});
after(async () => {
  await browser?.close();
  await sites?.stop();
});

/** Hands the episode loop an already prepared episode and keeps it alive for inspection. */
function keepAlive(prepared: PreparedEpisode): EpisodeEnvironment {
  return { prepareEpisode: async () => ({ ...prepared, dispose: async () => undefined }) };
}

test('concurrent episodes of one state-changing task are isolated', async () => {
  const task = generateSplits().train.find((t) => t.intent_template_id === 307);
  assert.ok(task, 'a "post in a forum" task');
  const { forum, title } = task.instantiation_dict as { forum: string; title: string };
  const env = new EmbeddedEnvironment({ siteUrls: sites.urls, tasks: [task] });
  const episodeTask = toEpisodeTask(task, sites.urls);
  const contexts: BrowserContext[] = await Promise.all([browser.newContext(), browser.newContext(), browser.newContext()]);
  const [a, b, fresh] = await Promise.all(contexts.map((c) => env.prepareEpisode(c, episodeTask)));
  assert.ok(a && b && fresh);

  const policy = createOraclePolicy();
  const results = await Promise.all(
    [a, b].map((prepared, i) => runEpisode(contexts[i] as BrowserContext, { task: episodeTask, policy, environment: keepAlive(prepared) })),
  );
  assert.deepEqual(
    results.map((r) => r.outcome.score),
    [1, 1],
  );

  const postsTitled = async (context: BrowserContext) => {
    const page = await context.newPage();
    await page.goto(`${sites.urls.reddit}/f/${forum}/new`);
    const titles = await page.locator('.submission__title a').allTextContents();
    await page.close();
    return titles.filter((t) => t === title).length;
  };
  assert.deepEqual(await Promise.all(contexts.map(postsTitled)), [1, 1, 0]);

  await Promise.all([a, b, fresh].map((p) => p.dispose()));
  await Promise.all(contexts.map((c) => c.close()));
});

test('episodes of sites served by another process are controlled over HTTP', async () => {
  // The servers answer on localhost too; under that origin they are not this process's own sites.
  const remote = Object.fromEntries(Object.entries(sites.urls).map(([site, url]) => [site, url.replace('127.0.0.1', 'localhost')]));
  const task = generateSplits().test[0];
  assert.ok(task);
  const env = new EmbeddedEnvironment({ siteUrls: remote, tasks: [task] });
  const context = await browser.newContext();
  const page = await context.newPage();
  const prepared = await env.prepareEpisode(context, toEpisodeTask(task, remote));
  assert.match(prepared.startUrl, /^http:\/\/localhost:/);
  assert.equal((await page.goto(prepared.startUrl))?.status(), 200);
  await prepared.dispose();
  assert.equal((await page.goto(prepared.startUrl))?.status(), 410);
  await context.close();
});
