import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EpisodeRequest } from '../../browser/episode';
import type { EpisodeOutcome } from '../../browser/episodeRecord';
import { createOraclePolicy } from '../../browser/policies/oracle';
import { BrowserPool } from '../../browser/pool';
import { serveDirectory, type StaticServer } from '../../browser/staticServer';
import { LocalTraceSink, readTraceFile } from '../../browser/traces';
import { createShopEnvironment, shopTasks, type ShopEnvironment } from './fixtures/shop';
import { SITE_DIR } from './helpers';

let server: StaticServer;
let traceDir: string;

before(async () => {
  server = await serveDirectory(SITE_DIR);
  traceDir = await mkdtemp(join(tmpdir(), 'webrl-pool-test-'));
});

after(async () => {
  await server.close();
  await rm(traceDir, { recursive: true, force: true });
});

function requests(environment: ShopEnvironment, count: number, sink?: LocalTraceSink): EpisodeRequest[] {
  const policy = createOraclePolicy();
  return shopTasks(count).map((task) => ({ task, policy, environment, ...(sink ? { traceSink: sink } : {}) }));
}

/** Four rounds of the pool's four slots: enough to show reuse and the cap. */
const EPISODES = 16;

describe('BrowserPool', () => {
  test(`${EPISODES} oracle episodes at concurrency 4 all complete, pass and leave a trace`, async () => {
    const pool = await BrowserPool.start({ size: 4 });
    const environment = createShopEnvironment(server.url);
    const sink = new LocalTraceSink(traceDir);
    let inFlight = 0;
    let mostInFlight = 0;
    const counted = requests(environment, EPISODES, sink).map((request) => ({
      ...request,
      environment: {
        async prepareEpisode(...args: Parameters<ShopEnvironment['prepareEpisode']>) {
          mostInFlight = Math.max(mostInFlight, ++inFlight);
          const prepared = await environment.prepareEpisode(...args);
          const dispose = async () => {
            inFlight--;
            await prepared.dispose();
          };
          return { ...prepared, dispose };
        },
      },
    }));
    try {
      const results = await pool.runAll(counted);
      const outcomes = results.map((r) => r.outcome);
      assert.equal(outcomes.length, EPISODES);
      assert.deepEqual(new Set(outcomes.map((o) => o.taskId)).size, EPISODES);
      const failed = outcomes.filter((o) => o.score !== 1 || o.infraFailure || o.reason !== 'exit');
      assert.deepEqual(failed, [], 'every oracle episode passes');
      assert.equal(mostInFlight, 4, 'the pool runs 4 episodes at once, never more');
      assert.deepEqual(environment.stats, { prepared: EPISODES, evaluated: EPISODES, disposed: EPISODES });
      assert.equal(pool.launches, 1);

      const files = await readdir(traceDir);
      assert.equal(files.filter((f) => f.endsWith('.jsonl')).length, EPISODES);
      const cart = await readTraceFile(join(traceDir, 'shop-1.jsonl'));
      assert.deepEqual(
        cart.map((row) => row.index),
        [0, 1, 2, 3, 4],
      );
      assert.equal(cart[0]!.prompt, cart[0]!.target, 'round 0 stands for the intent');
      assert.equal(cart[1]!.prompt, '** Simplified html **');
      assert.ok(cart.every((row) => row.score === 1 && row.infra_failure === false));
      assert.equal(cart.at(-1)!.final, true);
      assert.match(cart.at(-1)!.response, /^exit\(message="\$\d+\.\d\d"\)$/);
    } finally {
      await pool.close();
    }
  });

  test('killing Chromium mid-run fails only the episodes in flight; the pool relaunches and the rest complete', async () => {
    const pool = await BrowserPool.start({ size: 4 });
    let killedAt: number | undefined;
    // Kill the browser while the 6th episode is being prepared: episodes 3..6 (or so) are in flight then.
    const environment = createShopEnvironment(server.url, (prepared) => {
      if (prepared !== 6) return;
      const pid = pool.browserPid();
      assert.ok(pid, 'the pool knows its Chromium process');
      killedAt = prepared;
      process.kill(pid, 'SIGKILL');
    });
    try {
      const outcomes: EpisodeOutcome[] = (await pool.runAll(requests(environment, 12))).map((r) => r.outcome);
      assert.equal(killedAt, 6);
      assert.equal(outcomes.length, 12, 'every episode has an outcome');
      const infra = outcomes.filter((o) => o.infraFailure);
      assert.ok(infra.length >= 1 && infra.length <= 4, `${infra.length} infrastructure failures, at most the 4 in flight`);
      for (const o of infra) {
        assert.equal(o.reason, 'browser_crashed', `${o.taskId}: ${o.reason} ${o.detail}`);
        assert.equal(o.score, 0);
      }
      const rest = outcomes.filter((o) => !o.infraFailure);
      assert.ok(
        rest.every((o) => o.score === 1 && o.reason === 'exit'),
        'every other episode completes and passes',
      );
      assert.equal(pool.launches, 2, 'Chromium was relaunched once');
      assert.notEqual(pool.browserPid(), undefined);
    } finally {
      await pool.close();
    }
  });
});
