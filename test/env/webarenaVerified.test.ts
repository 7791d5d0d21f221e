/**
 * WebArena-Verified through the project: its task file (the installed package's 812 tasks) and hard
 * subset load and validate, and its official evaluator (the PyPI package in its own environment,
 * one long-lived process) scores the repository's demo logs (tasks 107 and 108,
 * test/fixtures/webarena-verified/demo) exactly as their eval_result.json says, and a failing variant
 * of each, from the network trace as recorded and as stored (scrubbed); an exit message that is not
 * JSON is a scored failure with its reason.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sharedVerifiedEvaluator, taskEvalResultSchema, type TaskEvalResult } from '../../env/evaluators/harnesses/verified/client';
import { scoreVerified } from '../../env/evaluators/harnesses/verified/harness';
import { parseTasksReport, readTaskFile, validateTaskFile } from '../../env/tasks/loader';
import type { WebArenaTask } from '../../env/tasks/schema';
import { DeterministicJudge } from '../../env/evaluators/judge';
import { storedHar } from '../../env/evaluators/harnesses/verified/network';
import { scrubStoredFile } from '../../storage/scrub';
import { backend as webarenaBackend } from '../../env/backends/webarena';
import { SitesUnavailable, type WorkerResources } from '../../env/backends/contract';
import { parseConfig } from '../../config/load';
import { EnvCtrlResetFailed, resetHookProblems, runResetHook, webArenaSites } from '../../env/webarena/sites';
import { sitesAndTasksProblems } from '../../env/webarena/preflight';
import { asWebArenaTask } from '../../cli/env';
import { generateTasks } from '../../env/tasks/generate';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

const DEMO = join(import.meta.dirname, '..', 'fixtures', 'webarena-verified', 'demo');
/** The demo's shop admin (the HAR's host), as the package's config would name it. */
const SITES = { shopping_admin: 'http://192.168.1.35:7780/admin' };

describe('WebArena-Verified', () => {
  let tasks: WebArenaTask[];
  let network: Record<string, unknown>[];

  before(async () => {
    tasks = await readTaskFile('webarena-verified');
    network = (JSON.parse(await readFile(join(DEMO, 'network.har'), 'utf8')) as { log: { entries: Record<string, unknown>[] } }).log.entries;
  });
  after(async () => (await sharedVerifiedEvaluator()).close());

  it('validates the package task file (812 tasks) and selects exactly the 258 hard ones', async () => {
    const full = await validateTaskFile('webarena-verified', { siteUrls: {}, judge: new DeterministicJudge() });
    assert.deepEqual(full.problems, []);
    assert.equal(full.total, 812);
    assert.equal(full.harness, 'webarena-verified');
    assert.equal(full.counts.byEvalType.AgentResponseEvaluator, 812);
    // 663 NetworkEventEvaluator entries, on 488 tasks (some tasks check several requests).
    assert.equal(full.counts.byEvalType.NetworkEventEvaluator, 488);

    const assets = await (await sharedVerifiedEvaluator()).assets();
    const ids = (JSON.parse(await readFile(join(assets.subsets, 'webarena-verified-hard.json'), 'utf8')) as { task_ids: number[] }).task_ids;
    assert.equal(ids.length, 258);
    const hard = await readTaskFile('webarena-verified-hard');
    assert.deepEqual(
      hard.map((task) => task.task_id),
      ids,
    );
    // A subset file of one's own selects the same way.
    const own = await readTaskFile(join(assets.subsets, 'webarena-verified-hard.json'));
    assert.deepEqual(
      own.map((task) => task.task_id),
      ids,
    );
  });

  it('lists every invalid task of a Verified file, each with its field', async () => {
    const raw = [
      { ...(tasks[0]!.verified as object), start_urls: [] },
      { ...(tasks[1]!.verified as object), eval: [{ evaluator: 'NetworkEventEvaluator', expected: { url: '__GITLAB__/x' } }] },
      tasks[2]!.verified,
    ];
    const report = parseTasksReport(raw);
    assert.equal(report.tasks.length, 1);
    assert.deepEqual(
      report.problems.map((p) => p.message),
      [
        `task ${tasks[0]!.task_id}: start_urls: Too small: expected array to have >=1 items`,
        `task ${tasks[1]!.task_id}: eval: expected exactly one AgentResponseEvaluator, found 0`,
      ],
    );
  });

  it('refuses a Verified task on a site that is not WebArena’s, a blank expected url, an unknown or unlisted start site, a bogus results_schema type', () => {
    const shopping = tasks.find((task) => task.sites.join() === 'shopping')!.verified as { task_id: number; eval: Record<string, unknown>[] };
    const response = shopping.eval.find((entry) => entry.evaluator === 'AgentResponseEvaluator')!;
    const variant = (id: number, change: object) => ({ ...shopping, task_id: id, ...change });
    const report = parseTasksReport([
      variant(9001, { sites: ['miniwob'] }),
      variant(9002, { eval: [response, { evaluator: 'NetworkEventEvaluator', expected: { url: '  ' } }] }),
      variant(9003, { start_urls: ['__SHOPING__/cart'] }),
      variant(9004, { start_urls: ['__REDDIT__/forums'] }),
      variant(9005, { eval: [{ ...response, results_schema: { type: 'array', items: { type: 'strnig' } } }] }),
    ]);
    assert.deepEqual(
      report.problems.map((p) => p.message),
      [
        'task 9001: sites[0]: expected one of WebArena\'s sites (shopping, shopping_admin, reddit, gitlab, map, wikipedia), got "miniwob"',
        'task 9002: eval[1].expected.url: blank: expected the URL the request must go to',
        "task 9003: start_urls[0]: __SHOPING__ is no WebArena site's placeholder (__SHOPPING__, __SHOPPING_ADMIN__, __REDDIT__, __GITLAB__, __MAP__, __WIKIPEDIA__)",
        "task 9004: start_urls[0]: starts on site reddit, which the task's sites (shopping) do not list",
        'task 9005: eval[0].results_schema: results_schema.items.type "strnig" is not a JSON Schema type (string, number, integer, boolean, array, object, null)',
      ],
    );
  });

  for (const id of [107, 108]) {
    it(`scores demo task ${id} as its eval_result.json does`, async () => {
      const expected = taskEvalResultSchema.parse(JSON.parse(await readFile(join(DEMO, String(id), 'eval_result.json'), 'utf8')));
      const answer = await readFile(join(DEMO, String(id), 'agent_response.json'), 'utf8');
      const task = tasks.find((t) => t.task_id === id)!;
      const { score, details } = await scoreVerified(task, SITES, answer, { network });
      assert.equal(score, expected.score);
      assert.equal(details.status, expected.status);
      assert.equal(details.evaluators, expected.evaluators_results.map((r) => `${r.evaluator_name}: ${r.status}`).join('; '));
      const { result } = await (
        await sharedVerifiedEvaluator()
      ).evaluate({ task: task.verified, response: JSON.parse(answer), entries: network, sites: SITES });
      const verdicts = (results: TaskEvalResult['evaluators_results']) =>
        results.map((r) => [r.evaluator_name, r.status, r.score, (r.assertions ?? []).map((a) => a.assertion_name)]);
      assert.deepEqual(verdicts(result.evaluators_results), verdicts(expected.evaluators_results));
      // The trace as stored (scrubbed of secrets) scores the same.
      const stored = (JSON.parse(storedHar(network)) as { log: { entries: Record<string, unknown>[] } }).log.entries;
      const again = await (await sharedVerifiedEvaluator()).evaluate({ task: task.verified, response: JSON.parse(answer), entries: stored, sites: SITES });
      assert.deepEqual(verdicts(again.result.evaluators_results), verdicts(expected.evaluators_results));
    });
  }

  it('starts the evaluator again when its process has exited', async () => {
    const first = await sharedVerifiedEvaluator();
    first.close();
    await new Promise((resolve) => setTimeout(resolve, 200));
    const second = await sharedVerifiedEvaluator();
    assert.notEqual(second, first);
    assert.equal((await second.assets()).version, '1.2.3');
  });

  it('an evaluator that dies under an episode is started again and asked again: the episode keeps its score', async () => {
    const expected = taskEvalResultSchema.parse(JSON.parse(await readFile(join(DEMO, '107', 'eval_result.json'), 'utf8')));
    const answer = await readFile(join(DEMO, '107', 'agent_response.json'), 'utf8');
    const dying = await sharedVerifiedEvaluator();
    const scoring = scoreVerified(
      tasks.find((t) => t.task_id === 107)!,
      SITES,
      answer,
      { network },
    );
    // The request is written before the next turn of the event loop; the process dies before it can answer.
    await new Promise((resolve) => setImmediate(resolve));
    dying.close();
    assert.equal((await scoring).score, expected.score);
    assert.notEqual(await sharedVerifiedEvaluator(), dying);
  });

  it('the pre-start check names a task site that is not WebArena’s (the task schema refuses it), instead of asking for a URL', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'webrl-site-check-'));
    try {
      const [train, test] = [join(dir, 'train.json'), join(dir, 'test.json')];
      const task = asWebArenaTask(generateTasks('test')[0]!);
      await writeFile(train, JSON.stringify([{ ...task, task_id: 7, sites: ['miniwob'] }]));
      await writeFile(test, JSON.stringify([{ ...task, task_id: 8, sites: ['miniwob'] }]));
      const config = parseConfig({
        campaign: {
          phase: { curriculum: false },
          environment: { backend: 'webarena', webarena: { sites: {}, tasks: { train: { path: train }, test: { path: test } } } },
        },
      });
      if (config.campaign.environment.backend !== 'webarena') throw new Error('webarena expected');
      const problems = await sitesAndTasksProblems(config.campaign.environment.webarena, { skipLogin: true, demonstrationsNeedOraclePlans: true });
      for (const [split, id] of [
        ['train', 7],
        ['test', 8],
      ] as const) {
        assert.ok(
          problems.some((p) => p.startsWith(`campaign.environment.webarena.tasks.${split}: task ${id}: sites[0]: Invalid option: expected one of "shopping"|`)),
          problems.join('\n'),
        );
      }
      assert.ok(!problems.some((p) => p.includes('sites.miniwob')), problems.join('\n'));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('the pre-start check refuses Verified tasks under another harness, and other tasks under the Verified one', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'webrl-verified-check-'));
    try {
      const file = join(dir, 'tasks.json');
      await writeFile(
        file,
        JSON.stringify(
          tasks
            .filter((t) => t.sites.join() === 'gitlab')
            .slice(0, 2)
            .map((t) => t.verified),
        ),
      );
      const ids = tasks
        .filter((t) => t.sites.join() === 'gitlab')
        .slice(0, 2)
        .map((t) => t.task_id)
        .join(', ');
      const problemsUnder = async (harness: string, train = file) => {
        const config = parseConfig({
          campaign: {
            phase: { curriculum: false },
            environment: { backend: 'webarena', webarena: { harness, sites: {}, tasks: { train: { path: train }, test: { path: file } } } },
          },
        });
        if (config.campaign.environment.backend !== 'webarena') throw new Error('webarena expected');
        return sitesAndTasksProblems(config.campaign.environment.webarena, { skipLogin: true, demonstrationsNeedOraclePlans: true });
      };
      const lite = await problemsUnder('webarena-lite');
      assert.ok(
        lite.includes(`campaign.environment.webarena.tasks.train: tasks ${ids} of ${file} are WebArena-Verified tasks: set harness: webarena-verified`),
        lite.join('\n'),
      );
      const verified = await problemsUnder('webarena-verified');
      assert.ok(!verified.some((p) => p.includes('WebArena-Verified')), verified.join('\n'));
      assert.ok(
        verified.some((p) => p.startsWith('site gitlab has no URL')),
        verified.join('\n'),
      );
      const plain = join(dir, 'plain.json');
      const task = asWebArenaTask(generateTasks('test')[0]!);
      await writeFile(plain, JSON.stringify([7, 8].map((task_id) => ({ ...task, task_id }))));
      const mixed = await problemsUnder('webarena-verified', plain);
      assert.ok(
        mixed.includes(
          `campaign.environment.webarena.tasks.train: tasks 7, 8 of ${plain} are not in WebArena-Verified's format, which harness webarena-verified scores`,
        ),
        mixed.join('\n'),
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('scores network-event tasks from the stored (scrubbed) trace as from the recorded one', async () => {
    const sites = { gitlab: 'http://gitlab.test:8023', shopping: 'http://shop.test:7770' };
    const pairs = (headers: Record<string, string>) => Object.entries(headers).map(([name, value]) => ({ name, value }));
    const entry = (
      request: { method: string; url: string; headers: Record<string, string>; post?: string; type?: string },
      response: Record<string, unknown>,
    ) => ({
      startedDateTime: new Date(0).toISOString(),
      time: 1,
      request: {
        method: request.method,
        url: request.url,
        httpVersion: 'HTTP/1.1',
        headers: pairs(request.headers),
        queryString: [...new URL(request.url).searchParams].map(([name, value]) => ({ name, value })),
        cookies: [],
        ...(request.post ? { postData: { mimeType: request.type!, text: request.post } } : {}),
      },
      response: { statusText: '', httpVersion: 'HTTP/1.1', redirectURL: '', cookies: [], ...response },
    });
    const secrets = ['sess-1111aaaa', 'csrf-3333cccc', 'pt-4444dddd', 'sess-5555eeee', 'at-6666ffff', 'php-7777gggg', 'fk-8888hhhh'];
    // Task 390: a GitLab note posted as JSON; task 512: a wish-list form whose flash message (a cookie) the evaluator reads.
    const message = encodeURIComponent(JSON.stringify([{ type: 'success', text: 'Colgate Toothpaste has been added to your wish list.' }]));
    const traces: Record<number, Record<string, unknown>[]> = {
      390: [
        entry(
          {
            method: 'POST',
            url: `${sites.gitlab}/a11yproject/a11yproject.com/notes?target_id=72594&target_type=merge_request`,
            headers: {
              Cookie: `_gitlab_session=${secrets[0]}`,
              'X-CSRF-Token': secrets[1]!,
              Referer: `${sites.gitlab}/a11yproject/a11yproject.com?private_token=${secrets[2]}`,
            },
            type: 'application/json; charset=utf-8',
            post: JSON.stringify({ note: { noteable_type: 'MergeRequest', note: 'lgtm' }, authenticity_token: secrets[1] }),
          },
          {
            status: 200,
            headers: pairs({ 'Content-Type': 'application/json', 'Set-Cookie': `_gitlab_session=${secrets[3]}; path=/` }),
            content: { size: 1, mimeType: 'application/json', text: JSON.stringify({ id: 1, access_token: secrets[4] }) },
          },
        ),
      ],
      512: [
        entry(
          {
            method: 'POST',
            url: `${sites.shopping}/wishlist/index/add/`,
            headers: { Cookie: `PHPSESSID=${secrets[5]}; form_key=${secrets[6]}` },
            type: 'application/x-www-form-urlencoded',
            post: `product=12&form_key=${secrets[6]}`,
          },
          {
            status: 302,
            headers: pairs({ Location: `${sites.shopping}/wishlist/`, 'Set-Cookie': `mage-messages=${message}; path=/\nPHPSESSID=${secrets[5]}; path=/` }),
            cookies: [
              { name: 'mage-messages', value: message },
              { name: 'PHPSESSID', value: secrets[5] },
            ],
            redirectURL: `${sites.shopping}/wishlist/`,
            content: { size: -1, mimeType: '' },
          },
        ),
      ],
    };
    const evaluator = await sharedVerifiedEvaluator();
    for (const [id, recorded] of Object.entries(traces)) {
      const task = tasks.find((t) => t.task_id === Number(id))!;
      const request = { task: task.verified, response: { task_type: 'MUTATE', status: 'SUCCESS', retrieved_data: null, error_details: null }, sites };
      // As an episode stores it: the HAR built, then the file scrubbed again with everything else it stores.
      const stored = scrubStoredFile('network.har', storedHar(recorded));
      for (const secret of secrets) assert.ok(!stored.includes(secret), `task ${id}: the stored trace keeps a secret`);
      for (const entries of [recorded, (JSON.parse(stored) as { log: { entries: Record<string, unknown>[] } }).log.entries]) {
        const { result } = await evaluator.evaluate({ ...request, entries });
        assert.deepEqual(
          result.evaluators_results.map((r) => [r.evaluator_name, r.status]),
          [
            ['AgentResponseEvaluator', 'success'],
            ['NetworkEventEvaluator', 'success'],
          ],
          `task ${id}`,
        );
      }
    }
  });

  it('fails a wrong variant of each demo, and a message that is not JSON with its reason', async () => {
    const task = (id: number) => tasks.find((t) => t.task_id === id)!;
    // 107 answered as it should be, one count off.
    const wrong107 = {
      task_type: 'RETRIEVE',
      status: 'SUCCESS',
      retrieved_data: [8, 13, 9, 8, 10, 4, 5, 11].map((count, i) => ({
        month: ['May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'][i],
        count,
      })),
      error_details: null,
    };
    const failed107 = await scoreVerified(task(107), SITES, JSON.stringify(wrong107), { network });
    assert.equal(failed107.score, 0);
    assert.equal(failed107.details.status, 'failure');
    // The same months with the right counts pass: the variant fails on the count alone.
    wrong107.retrieved_data[7]!.count = 10;
    assert.equal((await scoreVerified(task(107), SITES, JSON.stringify(wrong107), { network })).score, 1);
    // 108 reporting a status that is not success.
    const wrong108 = JSON.parse(await readFile(join(DEMO, '108', 'agent_response.json'), 'utf8')) as Record<string, unknown>;
    const failed108 = await scoreVerified(task(108), SITES, JSON.stringify({ ...wrong108, status: 'NOT_FOUND_ERROR' }), { network });
    assert.equal(failed108.score, 0);
    const prose = await scoreVerified(task(108), SITES, 'the counts are 12, 7, 5, 9 and 5', { network });
    assert.equal(prose.score, 0);
    assert.match(String(prose.details.response_problem), /not JSON/);
    const silent = await scoreVerified(task(108), SITES, null, {});
    assert.equal(silent.score, 0);
    assert.match(String(silent.details.response_problem), /without exit/);
  });
});

/** An env-ctrl service whose restart succeeds or fails; every call recorded. */
async function envCtrlService(restartOk: boolean): Promise<{ url: string; calls: string[]; server: Server }> {
  const calls: string[] = [];
  const server = createServer((request, response) => {
    calls.push(`${request.method} ${request.url}`);
    // The site itself (its health check) and the status answer; only the restart may fail.
    const ok = request.url !== '/restart?wait=1' || restartOk;
    response.writeHead(ok ? 200 : 500, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ success: ok, message: ok ? 'ready' : 'container gitlab did not come back', details: {} }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, calls, server };
}

function settingsWithEnvCtrl(url: string) {
  const environment = parseConfig({
    campaign: {
      phase: { curriculum: false },
      environment: {
        backend: 'webarena',
        webarena: {
          sites: { gitlab: { url, reset: { hook: { kind: 'env-ctrl', url }, policy: 'oncePerPhase' } } },
          tasks: { train: { path: 'unused.json' }, test: { path: 'unused.json' } },
          healthCheck: { attempts: 1, intervalSeconds: 0, timeoutSeconds: 5 },
        },
      },
    },
  }).campaign.environment;
  assert.equal(environment.backend, 'webarena');
  return environment as Extract<typeof environment, { backend: 'webarena' }>;
}

describe('the env-ctrl reset hook', () => {
  it('is probed before the campaign starts (GET /status, no restart); a hook that cannot be reached is named by its field', async () => {
    const service = await envCtrlService(true);
    try {
      const [site] = webArenaSites(settingsWithEnvCtrl(service.url).webarena);
      assert.deepEqual(await resetHookProblems([site!]), []);
      assert.deepEqual(service.calls, ['GET /status']);
    } finally {
      service.server.close();
    }
    const closed = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const { port } = server.address() as AddressInfo;
        server.close(() => resolve(port));
      });
    });
    const gone = `http://127.0.0.1:${closed}`;
    const [envCtrlSite] = webArenaSites(settingsWithEnvCtrl(gone).webarena);
    const problems = await resetHookProblems([
      envCtrlSite!,
      { ...envCtrlSite!, name: 'reddit', reset: { hook: { http: { url: `${gone}/reset`, method: 'POST', timeoutSeconds: 5 } }, policy: 'never' } },
      { ...envCtrlSite!, name: 'shopping', reset: { hook: { command: 'no-such-reset-program --all', timeoutSeconds: 5 }, policy: 'never' } },
    ]);
    assert.deepEqual(problems, [
      `campaign.environment.webarena.sites.gitlab.reset.hook: the reset hook cannot be reached: reset of site gitlab: env-ctrl GET ${gone}/status: ECONNREFUSED`,
      'campaign.environment.webarena.sites.reddit.reset.hook: the reset hook cannot be reached: ECONNREFUSED',
      'campaign.environment.webarena.sites.shopping.reset.hook: the reset hook cannot be reached: no-such-reset-program is not a program the shell finds',
    ]);
  });

  it('restarts the site and waits for it (restart?wait=1), then checks its status', async () => {
    const service = await envCtrlService(true);
    try {
      const [site] = webArenaSites(settingsWithEnvCtrl(service.url).webarena);
      await runResetHook(site!);
      assert.deepEqual(service.calls, ['POST /restart?wait=1', 'GET /status']);
    } finally {
      service.server.close();
    }
  });

  it('a failed restart names the site, and the phase waits for an operator (SitesUnavailable)', async () => {
    const service = await envCtrlService(false);
    try {
      const settings = settingsWithEnvCtrl(service.url);
      const [site] = webArenaSites(settings.webarena);
      await assert.rejects(runResetHook(site!), (error: Error) => {
        assert.ok(error instanceof EnvCtrlResetFailed);
        assert.equal(error.message, `reset of site gitlab: env-ctrl POST ${service.url}/restart?wait=1: container gitlab did not come back (HTTP 500)`);
        return true;
      });
      const shared = new Map<string, unknown>();
      const workers = {
        openContext: () => Promise.reject(new Error('no browser here')),
        siteAddresses: { host: '127.0.0.1', ports: {} },
        shared: <T>(key: string, create: () => T): T => (shared.has(key) ? shared.get(key) : shared.set(key, create()).get(key)) as T,
      } as WorkerResources;
      await assert.rejects(
        webarenaBackend.prepare!(workers, settings, 'phase', (run) => run()),
        (error: Error) => {
          assert.ok(error instanceof SitesUnavailable);
          assert.match(error.message, /^reset of site gitlab: env-ctrl POST .*did not come back/);
          return true;
        },
      );
    } finally {
      service.server.close();
    }
  });
});
