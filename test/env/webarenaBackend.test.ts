/**
 * The `webarena` backend against the embedded sites served as a separate deployment (`webrl env
 * serve` in its own process): login with WebArena's forms, storage states refreshed when a session
 * ends, reset hooks (HTTP and a shell command) and their policies, per-site caps, the health check,
 * the pre-start validation, and the oracle scoring the same in both modes on exported test tasks.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { BrowserPool } from '../../browser/pool';
import { createOraclePolicy } from '../../browser/policies/oracle';
import { parseConfig } from '../../config/load';
import { EmbeddedEnvironment, toEpisodeTask } from '../../env/embedded';
import { startEmbeddedSites } from '../../env/embeddedSites';
import { Rng } from '../../env/random';
import type { WebArenaTask } from '../../env/tasks/schema';
import { WebArenaEnvironment, WebArenaSites } from '../../env/webarena/environment';
import { backendOf } from '../../env/backends/registry';
import { freePort } from '../../infra/processes';
import { runWebrl } from '../harness/cli';
import { serveSites, servedWebArenaConfig, type ServedSites } from '../harness/servedSites';
import type { EpisodeEnvironment } from '../../browser/contract';

/** One exported test task per template (seeded), or all of them with WEBRL_ENV_ORACLE_ALL=1. */
function sampleByTemplate(tasks: WebArenaTask[], size: number): WebArenaTask[] {
  if (process.env.WEBRL_ENV_ORACLE_ALL === '1') return tasks;
  const chosen = new Map<number | undefined, WebArenaTask>();
  for (const task of new Rng(39).shuffle(tasks)) if (!chosen.has(task.intent_template_id)) chosen.set(task.intent_template_id, task);
  return [...chosen.values()].slice(0, size);
}

describe('the webarena backend on the embedded sites served in their own process', () => {
  let served: ServedSites;
  let pool: BrowserPool;
  let dir: string;
  let exported: WebArenaTask[];
  const savedEnv = { ...process.env };

  before(async () => {
    [served, pool, dir] = await Promise.all([serveSites(), BrowserPool.start({ size: 4 }), mkdtemp(join(tmpdir(), 'webrl-webarena-'))]);
    Object.assign(process.env, served.credentials);
    const file = join(dir, 'test.json');
    const result = await runWebrl(['env', 'export', '--split', 'test', '--out', file]);
    assert.equal(result.code, 0, result.output);
    exported = JSON.parse(await readFile(file, 'utf8')) as WebArenaTask[];
  });
  after(async () => {
    process.env = savedEnv;
    await pool?.close();
    await served?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test('env export writes WebArena-format tasks with placeholders, login and oracle plans', () => {
    assert.equal(exported.length, 203);
    assert.ok(exported.every((task) => task.require_login === true && /^\.\/\.auth\/[a-z_.]+_state\.json$/.test(task.storage_state ?? '')));
    assert.ok(exported.every((task) => /^__[A-Z_]+__/.test(task.start_url) && (task.oracle?.length ?? 0) > 0));
  });

  test('oracle episodes score the same on the served sites (login, a reset before every episode, one episode per site) as on the embedded ones', async () => {
    const tasks = sampleByTemplate(exported, 12);
    const sites = new WebArenaSites(
      servedWebArenaConfig(served, join(dir, 'test.json'), (site) => ({
        maxConcurrentEpisodes: 1,
        reset: { hook: served.resetHook(site, 'http'), policy: { everyNEpisodes: 1 } },
      })),
      () => pool.openContext(),
    );
    const embeddedSites = await startEmbeddedSites();
    const score = async (environment: EpisodeEnvironment, urls: typeof sites.urls) =>
      new Map(
        await Promise.all(
          tasks.map(async (task) => {
            // Infrastructure failures (a step timing out on a busy machine) are retried, as rollouts do.
            const run = () => pool.runEpisode({ task: toEpisodeTask(task, urls), policy: createOraclePolicy(), environment });
            let { outcome } = await run();
            for (let retry = 0; retry < 2 && outcome.infraFailure; retry++) ({ outcome } = await run());
            assert.equal(outcome.infraFailure, false, `task ${task.task_id}: ${outcome.reason} ${outcome.detail ?? ''}`);
            return [String(task.task_id), outcome.score] as const;
          }),
        ),
      );
    try {
      const webarena = await score(new WebArenaEnvironment(sites, tasks), sites.urls);
      const embedded = await score(new EmbeddedEnvironment({ siteUrls: embeddedSites.urls, tasks }), embeddedSites.urls);
      assert.deepEqual(webarena, embedded);
      assert.ok(
        [...webarena.values()].every((s) => s === 1),
        'the oracle solves every sampled task',
      );
    } finally {
      await embeddedSites.stop();
    }
    // Login happened on the server: each site with tasks saw a sign-in, and no password reached its log.
    for (const site of new Set(tasks.map((task) => task.sites[0]!))) {
      assert.ok((await served.health(site as 'shopping')).logins > 0, `no login on ${site}`);
      // After every episode but the first, a reset (everyNEpisodes: 1).
      const episodes = tasks.filter((task) => task.sites[0] === site).length;
      assert.equal(sites.resets.get(site)?.length ?? 0, episodes - 1, `resets of ${site}`);
    }
    assert.match(served.process.output(), /login reddit: MarvelsGrantMan136 signed in/);
    for (const password of served.passwords) assert.ok(!served.process.output().includes(password));
  });

  test('a command reset hook restores the state an episode wrote; a session the site ended is signed in again', async () => {
    const writer = exported.find((task) => task.sites[0] === 'reddit' && task.eval.eval_types.includes('program_html'))!;
    const origin = served.origins.reddit;
    const sites = new WebArenaSites(
      servedWebArenaConfig(
        served,
        join(dir, 'test.json'),
        (site) => (site === 'reddit' ? { reset: { hook: served.resetHook('reddit', 'command'), policy: 'oncePerPhase' } } : {}),
        { sessionCheckSeconds: 0 },
      ),
      () => pool.openContext(),
    );
    const environment = new WebArenaEnvironment(sites, [writer]);
    const run = () => pool.runEpisode({ task: toEpisodeTask(writer, sites.urls), policy: createOraclePolicy(), environment });
    assert.equal((await run()).outcome.score, 1);
    assert.ok((await served.health('reddit')).changedRows > 0, 'the episode wrote to the shared state');
    assert.deepEqual(await sites.resetAt('phase'), ['reddit']);
    assert.equal((await served.health('reddit')).changedRows, 0, 'the reset dropped what the episode wrote');
    const signIns = sites.sessions.signIns.get('reddit') ?? 0;
    assert.equal((await run()).outcome.score, 1, 'signed in again after the reset');
    assert.equal(sites.sessions.signIns.get('reddit'), signIns + 1);

    // The site ends every session behind the worker's back: the next episode finds its state expired
    // (its account page, the check page, no longer shows "Delete") and signs in afresh before it starts.
    await fetch(`${origin}/__webrl/reset`, { method: 'POST' });
    assert.equal((await run()).outcome.score, 1);
    assert.equal(sites.sessions.signIns.get('reddit'), signIns + 2);
  });

  test('a per-site cap holds episodes back; the health check names a site that is down', async () => {
    const sites = new WebArenaSites(
      servedWebArenaConfig(served, join(dir, 'test.json'), (site) => (site === 'gitlab' ? { maxConcurrentEpisodes: 2 } : {})),
      () => pool.openContext(),
    );
    const [a, b] = [await sites.enter(['gitlab']), await sites.enter(['gitlab'])];
    let third = false;
    const waiting = sites.enter(['gitlab']).then((release) => ((third = true), release));
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(third, false, 'a third gitlab episode waits for a slot');
    a();
    (await waiting)();
    b();
    assert.deepEqual(await sites.unavailable(), []);
    const port = await freePort();
    const down = new WebArenaSites({ ...sites.config, sites: { ...sites.config.sites, map: { url: `http://127.0.0.1:${port}`, login: {} } } }, () =>
      pool.openContext(),
    );
    const problems = await down.unavailable();
    assert.deepEqual(
      problems.map((p) => p.site),
      ['map'],
    );
    assert.match(problems[0]!.message, new RegExp(`site map at http://127.0.0.1:${port} is unreachable: ECONNREFUSED`));
  });

  test('the pre-start check lists every problem at once: a site without URL, an unreachable site, a failed login, no oracle plans', async () => {
    const file = join(dir, 'test.json');
    const tasks = JSON.parse(await readFile(file, 'utf8')) as WebArenaTask[];
    const noOracle = join(dir, 'train-no-oracle.json');
    await writeFile(noOracle, JSON.stringify(tasks.slice(0, 3).map(({ oracle: _oracle, ...task }) => task)));
    const deadPort = await freePort();
    const config = parseConfig({
      campaign: {
        phase: { curriculum: false },
        environment: {
          backend: 'webarena',
          webarena: {
            sites: {
              shopping: { url: served.urls.shopping, login: { passwordEnv: 'WRONG_SHOPPING_PASSWORD' } },
              reddit: { url: `http://127.0.0.1:${deadPort}` },
              gitlab: { url: served.urls.gitlab },
            },
            tasks: { train: { path: noOracle }, test: { path: file } },
            healthCheck: { attempts: 1, timeoutSeconds: 5 },
          },
        },
      },
    });
    const { backend, settings } = backendOf(config);
    const problems = await backend.check(settings, {
      demonstrationsNeedOraclePlans: config.models.actor.backend === 'embedded',
      env: { ...process.env, WRONG_SHOPPING_PASSWORD: 'not-the-password' },
    });
    const text = problems.join('\n');
    assert.match(text, /no task of .*train-no-oracle\.json has an oracle plan/);
    assert.match(
      text,
      /site shopping_admin has no URL \(set campaign\.environment\.webarena\.sites\.shopping_admin\.url or SHOPPING_ADMIN\); it is needed by tasks \d+/,
    );
    assert.match(text, new RegExp(`site reddit at http://127.0.0.1:${deadPort} is unreachable: ECONNREFUSED.*needed by tasks \\d+`));
    assert.match(text, /login to site shopping at .* failed: the sign-in form is still shown; it is needed by tasks \d+/);
    assert.doesNotMatch(text, /site gitlab/);
    assert.ok(!text.includes('not-the-password'));

    assert.throws(
      () => parseConfig({ campaign: { environment: { backend: 'webarena', webarena: { tasks: { train: { path: file }, test: { path: file } } } } } }),
      /campaign\.phase\.curriculum: the curriculum on WebArena sites needs models\.taskGenerator\.backend: chat/,
    );
    assert.throws(
      () => parseConfig({ campaign: { environment: { backend: 'webarena' } } }),
      /campaign\.environment\.webarena: backend webarena needs the webarena section/,
    );
    const fromEnv = parseConfig(
      {
        campaign: { phase: { curriculum: false }, environment: { backend: 'webarena', webarena: { tasks: { train: { path: file }, test: { path: file } } } } },
      },
      'test',
      { SHOPPING: 'http://shop.example:7770', MAP: 'http://map.example:3000' },
    );
    const environment = fromEnv.campaign.environment;
    assert.ok(environment.backend === 'webarena');
    assert.equal(environment.webarena.sites.shopping?.url, 'http://shop.example:7770');
    assert.equal(environment.webarena.sites.map?.url, 'http://map.example:3000');
  });
});
