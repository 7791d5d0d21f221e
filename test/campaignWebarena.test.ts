/**
 * A campaign in `webarena` mode on the real stack, against the embedded sites served as a separate
 * deployment (`webrl env serve` in its own process), on the LLM path: a completions actor behind the
 * vLLM-like server, the chat task generator for the curriculum, the adapter trainer. The actor upvotes
 * the first post it has not upvoted on every forum page it starts on, so each reddit episode writes one
 * row to the shared site, and what every episode saw tells whether the writes before it survived.
 *
 * Shown here: login on every site; the resets before each evaluation (a shell command on reddit, an
 * HTTP hook on the shops) drop what the phase wrote, gitlab's at the start of each phase (HTTP); the
 * generator's tasks are what phase 1 trains on; reddit going down mid-phase retries the episodes, then
 * leaves the phase waiting for an operator with the site named and nothing left running, and
 * retry-phase finishes it once the site is back.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@temporalio/client';
import { campaignProgress, campaignWorkflowId, retryFailedPhase } from '../campaign/control';
import { EMBEDDED_SITE_NAMES, type EmbeddedSiteName } from '../env/siteUrls';
import type { WebArenaTask } from '../env/tasks/schema';
import { runWebrl } from './harness/cli';
import { recordHistories } from './harness/histories';
import { BASE_MODEL, runLlmCampaign } from './harness/llmCampaign';
import { interruptibleSite, serveSites, servedSiteSettings, type InterruptibleSite, type ServedSites } from './harness/servedSites';
import { startTestStack, type TestStack } from './harness/stack';
import { waitFor } from './harness/workerProcess';
import { chatCompletion, readActorPrompt, startServer, type TestServer } from './models/fixtures/servers';
import { startVllmServer } from './models/fixtures/vllmServer';

const NAME = 'webarena-llm';
/** What the chat generator answers for the forum: four tasks the actor's habit fits. */
const UPVOTE_TASKS = [1, 2, 3, 4].map((n) => `Upvote post number ${n} on the front page of the forum`);

/** Every string and payload (bytes read as UTF-8) in a fetched history. */
function historyText(value: unknown, out: string[] = []): string[] {
  if (value instanceof Uint8Array) out.push(Buffer.from(value).toString('utf8'));
  else if (typeof value === 'string') out.push(value);
  else if (value && typeof value === 'object') for (const field of Object.values(value)) historyText(field, out);
  return out;
}

/** One reddit page as the actor saw it at the start of an episode. */
interface Look {
  model: string;
  intent: string;
  /** Posts the signed-in user has upvoted on that page (their upvote button would take the vote back). */
  upvoted: number;
}

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
    // Task files as a user exports them, cut to a few tasks per site (most of them on the forum).
    for (const [split, perSite] of [
      ['train', { reddit: 6, other: 2 }],
      ['test', { reddit: 1, other: 1 }],
    ] as const) {
      const file = join(dir, `${split}.json`);
      const result = await runWebrl(['env', 'export', '--split', split, '--out', file]);
      assert.equal(result.code, 0, result.output);
      const tasks = JSON.parse(await readFile(file, 'utf8')) as WebArenaTask[];
      const cut = EMBEDDED_SITE_NAMES.flatMap((site) =>
        tasks.filter((t) => t.sites.length === 1 && t.sites[0] === site).slice(0, site === 'reddit' ? perSite.reddit : perSite.other),
      );
      await writeFile(file, JSON.stringify(cut));
    }
  });
  after(async () => {
    process.env = savedEnv;
    await served?.stop();
    await stack?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test('login, a reset before each evaluation drops what the phase wrote, the chat curriculum, and a site outage mid-phase', async () => {
    const reddit: InterruptibleSite = await interruptibleSite(served.urls.reddit);
    const looks: Look[] = [];
    let outage: 'ahead' | 'started' = 'ahead';
    let firstRunId: string | undefined;
    const actor = await startVllmServer({
      base: BASE_MODEL,
      answer(model, _adapter, prompt) {
        const { intent, round, html } = readActorPrompt(prompt);
        if (round === 0 && html.includes('title="Upvote"')) {
          looks.push({ model, intent, upvoted: (html.match(/title="Upvote" value="0"/g) ?? []).length });
          const up = /<button id="(\d+)" title="Upvote" value="1"/.exec(html);
          if (up) return `do(action="Click", element="${up[1]}")`;
        }
        // The forum goes down right after phase 1's first upvote: the next episodes there cannot start.
        if (round > 0 && UPVOTE_TASKS.includes(intent) && outage === 'ahead') {
          outage = 'started';
          void reddit.down();
        }
        return 'exit(message="done")';
      },
    });
    const generator: TestServer = await startServer((request) => {
      const messages = (request.body as { messages: { role: string; content: string }[] }).messages;
      const forum = messages.some((m) => m.role === 'user' && m.content.startsWith('Website: reddit'));
      const tasks = forum ? UPVOTE_TASKS.map((intent) => ({ intent, start_url: '__REDDIT__' })) : [];
      return { json: chatCompletion(JSON.stringify(tasks), 'generator') };
    });
    const reset = (site: EmbeddedSiteName) => ({
      hook: served.resetHook(site, site === 'reddit' ? 'command' : 'http'),
      policy: site === 'gitlab' ? 'oncePerPhase' : 'beforeEvaluation',
    });
    const sites = servedSiteSettings(served, (site) => ({ reset: reset(site), maxConcurrentEpisodes: site === 'reddit' ? 1 : 2 }));
    sites.reddit = { ...(sites.reddit as object), url: reddit.url };
    const testTasks = JSON.parse(await readFile(join(dir, 'test.json'), 'utf8')) as WebArenaTask[];
    const forumTest = testTasks.find((t) => t.sites[0] === 'reddit')!.intent;

    const run = await runLlmCampaign(stack, client, NAME, 'vllm-lora', {
      phases: 1,
      actor: { server: actor },
      ormVerdict: 'NO',
      campaign: {
        phase: { curriculum: true, candidateFactor: 1 },
        environment: {
          demonstrationTasks: 8,
          backend: 'webarena',
          webarena: {
            sites,
            tasks: { train: { path: join(dir, 'train.json') }, test: { path: join(dir, 'test.json') } },
            healthCheck: { attempts: 2, intervalSeconds: 0.2, timeoutSeconds: 5 },
          },
        },
      },
      models: {
        taskGenerator: {
          backend: 'chat',
          baseUrl: `${generator.url}/v1`,
          model: 'generator',
          turns: 1,
          tasksPerTurn: 4,
          fillWithEmbedded: false,
          maxAttempts: 1,
          retryDelayMs: 0,
        },
      },
      async whileRunning(handle) {
        firstRunId = handle.firstExecutionRunId;
        const waiting = await waitFor('phase 1 to stop running', async () => {
          const progress = await campaignProgress(client, NAME);
          return progress.status === 'running' ? undefined : progress;
        });
        assert.equal(waiting.status, 'waiting-for-operator', JSON.stringify({ looks, progress: waiting }));
        assert.equal(waiting.failure?.phase, 1);
        assert.equal(waiting.failure?.activity, 'runRolloutShard');
        assert.equal(waiting.failure?.type, 'SiteUnavailable');
        assert.match(waiting.failure?.message ?? '', /site reddit .*retry the phase/);
        const description = await handle.describe();
        assert.deepEqual(description.searchAttributes.Status, ['waiting-for-operator']);
        // The other shards were cancelled and have stopped: nothing of the phase runs on the sites now.
        assert.deepEqual(description.raw.pendingActivities ?? [], []);
        await reddit.up();
        assert.equal(await retryFailedPhase(client, NAME), 1);
        const finished = await waitFor('the retried phase to finish', async () => {
          const progress = await campaignProgress(client, NAME);
          return progress.status === 'running' ? undefined : progress;
        });
        assert.equal(finished.status, 'completed', JSON.stringify(finished));
      },
    });
    try {
      assert.equal(run.final.status, 'completed');
      assert.deepEqual(
        run.final.history.map((h) => h.phase),
        [0, 1],
      );

      // Phase 1 trained on the generator's tasks, each rolled out on the forum. An episode that an
      // infrastructure failure cut after its vote runs again (the site keeps the vote), so a task may
      // have been seen twice.
      const generation = await run.store.getJson<{ generated: number }>(`campaigns/${NAME}/phase-1/tasks/generation.json`);
      assert.equal(generation.generated, UPVOTE_TASKS.length);
      const phase1 = looks.filter((l) => UPVOTE_TASKS.includes(l.intent));
      assert.deepEqual([...new Set(phase1.map((l) => l.intent))].sort(), [...UPVOTE_TASKS].sort(), JSON.stringify(looks, null, 1));

      // Phase 0's evaluation saw the forum as seeded (its reset had dropped the demonstrations' and the
      // probe's votes); phase 1's episodes each saw the votes before them; after the reset before phase
      // 1's evaluation, the forum is as seeded again.
      const seen = (actorOf: RegExp) => looks.find((l) => l.intent === forumTest && actorOf.test(l.model));
      const seeded = seen(/-p0-actor$/)!.upvoted;
      assert.deepEqual(
        phase1.map((l) => l.upvoted),
        phase1.map((_, i) => seeded + 1 + i),
        JSON.stringify(looks, null, 1),
      );
      assert.equal(seen(/-p1-actor$/)?.upvoted, seeded, "phase 1's votes are gone after the reset");
      const dropped = (site: string) =>
        [...served.process.output().matchAll(new RegExp(`reset ${site}: seeded state restored \\((\\d+) changed rows dropped\\)`, 'g'))].map((m) =>
          Number(m[1]),
        );
      assert.equal(dropped('reddit')[1], 1 + phase1.length, "the forum's second reset dropped phase 0's evaluation vote and phase 1's");

      for (const site of EMBEDDED_SITE_NAMES) {
        const health = await served.health(site);
        assert.ok(health.logins > 0, `no login on ${site}`);
        // gitlab's once at the start of each phase: not again when retry-phase reran phase 1's start.
        assert.equal(health.resets, 2, `${site} was reset ${site === 'gitlab' ? 'at the start of' : 'before the evaluation of'} each phase, once`);
      }
      assert.ok(
        EMBEDDED_SITE_NAMES.some((site) => (dropped(site)[0] ?? 0) > 0),
        'the demonstrations wrote to the sites',
      );
      // No password reached either run's history (payloads read as text) or the sites' log.
      const runs = [client.workflow.getHandle(campaignWorkflowId(NAME), firstRunId), client.workflow.getHandle(campaignWorkflowId(NAME))];
      const histories = (await Promise.all(runs.map((handle) => handle.fetchHistory()))).flatMap((history) => historyText(history)).join('\n');
      assert.match(histories, /prepareEnvironment/);
      assert.match(histories, /nextPhase/, 'the histories are read as text');
      for (const password of served.passwords) {
        assert.ok(!histories.includes(password), 'a password in a history');
        assert.ok(!served.process.output().includes(password), 'a password in the sites log');
      }
      if (process.env.WEBRL_RECORD_HISTORIES) {
        const [first, last] = await Promise.all(runs.map((handle) => handle.describe()));
        await recordHistories(
          stack,
          NAME,
          [
            { runId: first!.runId, phase: 0 },
            { runId: last!.runId, phase: 1 },
          ],
          process.env.WEBRL_RECORD_HISTORIES,
        );
      }
    } finally {
      await run.close();
      await generator.close();
      await reddit.down();
    }
  });
});
