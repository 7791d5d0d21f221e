/**
 * The control plane under concurrent starts and operator mistakes, on the real stack: of two starts
 * of one name with different configs exactly one wins, everywhere; every mistake an operator makes
 * on the command line is one line, no stack trace, and a non-zero exit.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import type { Client } from '@temporalio/client';
import { campaignConfigKey, campaignHandle, startCampaign } from '../campaign/control';
import { configSha256 } from '../config/frozen';
import { parseConfig } from '../config/load';
import type { Config } from '../config/campaignConfig';
import { ArtifactStore } from '../storage/artifactStore';
import { runWorkers } from '../workers/run';
import type { CampaignWorkflowInput } from '../workflows/campaign';
import { runWebrl } from './harness/cli';
import { tinyCampaignConfig } from './harness/campaign';
import { startTestStack, type TestStack } from './harness/stack';
import { WEBARENA_LITE_TEST_FILE } from './harness/data';

/** The input the workflow was started with, from the first event of its history. */
async function startInput(client: Client, name: string): Promise<CampaignWorkflowInput> {
  const history = await campaignHandle(client, name).fetchHistory();
  const payload = history.events![0]!.workflowExecutionStartedEventAttributes!.input!.payloads![0]!;
  return JSON.parse(Buffer.from(payload.data!).toString('utf8')) as CampaignWorkflowInput;
}

describe('control plane', () => {
  let stack: TestStack;
  let client: Client;

  before(async () => {
    stack = await startTestStack();
    client = await stack.client();
  });
  after(async () => stack?.stop());

  test('two concurrent starts of one name with different configs: exactly one config wins, everywhere', async () => {
    for (let round = 0; round < 8; round++) {
      const name = `race-${round}`;
      const a = await tinyCampaignConfig(stack, name, { seed: 1, phases: 2 });
      const b = parseConfig({ ...a, campaign: { ...a.campaign, seed: 2, phases: 3, environment: { ...a.campaign.environment, maxSteps: 5 } } });
      // Separate stores, as two operators' processes would have.
      const stores = [new ArtifactStore(a.s3, stack.secrets.s3), new ArtifactStore(b.s3, stack.secrets.s3)];
      try {
        const outcomes = await Promise.allSettled([startCampaign(client, stores[0]!, a), startCampaign(client, stores[1]!, b)]);
        const won = outcomes.map((o) => o.status === 'fulfilled');
        assert.equal(won.filter(Boolean).length, 1, `round ${round}: exactly one start succeeds`);
        const winner: Config = won[0] ? a : b;
        const loser = outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult;
        assert.match(
          String(loser.reason),
          /already exists with a different configuration .*differing: campaign\.environment\.maxSteps, campaign\.phases, campaign\.seed\b/,
        );

        const stored = await stack.store.getBytes(campaignConfigKey(name));
        assert.deepEqual(JSON.parse(stored.toString('utf8')), JSON.parse(JSON.stringify(winner)), 'the stored config is the winner');
        const handle = campaignHandle(client, name);
        const memo = (await handle.describe()).memo as { config: { seed: number; phases: number; configSha256: string } };
        assert.equal(memo.config.seed, winner.campaign.seed, 'the memo is the winner');
        assert.equal(memo.config.configSha256, configSha256(stored));
        const input = await startInput(client, name);
        assert.equal(input.seed, winner.campaign.seed, 'the workflow runs the winner');
        assert.equal(input.phases, winner.campaign.phases);
        assert.equal(input.configSha256, configSha256(stored), 'and names the stored config by its checksum');
        await handle.terminate('test over');
      } finally {
        for (const store of stores) store.destroy();
      }
    }
  });

  describe('operator mistakes on the command line', () => {
    let configFile: string;
    let stop: AbortController;
    let worker: Promise<void>;
    const webrl = (...args: string[]) => runWebrl(args, { env: { ...process.env, ...stack.env } });

    /** One line on stderr or stdout, no stack trace, the expected exit code. */
    function assertOneLine(run: { code: number; output: string }, code: number, pattern: RegExp): void {
      assert.equal(run.code, code, run.output);
      assert.equal(run.output.trim().split('\n').length, 1, `one line:\n${run.output}`);
      assert.doesNotMatch(run.output, /^\s+at /m);
      assert.match(run.output.trim(), pattern);
    }

    before(async () => {
      const config = await tinyCampaignConfig(stack, 'ops');
      configFile = join(stack.dir, 'ops.json');
      await writeFile(configFile, JSON.stringify(config));
      // The workflow worker alone: the campaign runs (its first activity waits for a browser worker)
      // and answers queries and updates.
      stop = new AbortController();
      worker = runWorkers({ config, secrets: stack.secrets }, ['control'], stop.signal);
      const started = await webrl('campaign', 'start', '-c', configFile);
      assert.equal(started.code, 0, started.output);
    });
    after(async () => {
      stop.abort();
      await worker;
    });

    test('starting a running campaign again', async () => {
      assertOneLine(await webrl('campaign', 'start', '-c', configFile), 1, /^webrl: campaign 'ops' is already running; use 'webrl campaign status -n ops'$/);
    });

    test('starting it with another config', async () => {
      const other = join(stack.dir, 'ops-other.json');
      const config = JSON.parse(JSON.stringify(await tinyCampaignConfig(stack, 'ops', { seed: 9 })));
      await writeFile(other, JSON.stringify(config));
      assertOneLine(await webrl('campaign', 'start', '-c', other), 1, /differing: campaign\.seed, sites\.ports\.\w+/);
    });

    test('retrying a phase that has not failed', async () => {
      assertOneLine(
        await webrl('campaign', 'retry-phase', '-c', configFile),
        1,
        /^webrl: the campaign refused the request: phase 0 has not failed \(status: running\); nothing to retry$/,
      );
    });

    test('an invalid setting', async () => {
      assertOneLine(await webrl('campaign', 'set', 'criticBand=[0.8,0.1]', '-c', configFile), 1, /^webrl: the campaign refused the request: .*criticBand/);
    });

    test('a setting without a value is a usage error', async () => {
      assertOneLine(await webrl('campaign', 'set', 'criticBand', '-c', configFile), 2, /^webrl: expected key=value, got 'criticBand'$/);
    });

    test('the status of a campaign that does not exist', async () => {
      assertOneLine(
        await webrl('campaign', 'status', '-n', 'nosuch', '-c', configFile),
        1,
        /^webrl: no campaign 'nosuch' on this Temporal namespace; 'webrl campaign list' shows the campaigns there$/,
      );
    });

    test('an unknown flag is a usage error (exit 2)', async () => {
      const run = await webrl('campaign', 'status', '--bogus', '-c', configFile);
      assert.equal(run.code, 2, run.output);
      assert.match(run.output, /unknown option '--bogus'/);
    });

    test('resuming a campaign that has ended', async () => {
      await campaignHandle(client, 'ops').terminate('ended for the test');
      assertOneLine(
        await webrl('campaign', 'resume', '-c', configFile),
        1,
        /^webrl: campaign 'ops' has already finished; 'webrl campaign report -n ops' shows its results$/,
      );
    });

    test('with --debug, the stack trace follows the line', async () => {
      const run = await webrl('campaign', 'status', '-n', 'nosuch', '-c', configFile, '--debug');
      assert.equal(run.code, 1);
      assert.match(run.output, /^webrl: no campaign 'nosuch'/);
      assert.match(run.output, /^\s+at /m);
    });
  });

  test('a second worker on a machine whose site ports are held serves the other queues and says why', async () => {
    const config = await tinyCampaignConfig(stack, 'second-worker');
    const holders = await Promise.all(
      Object.values(config.sites.ports).map(
        (port) =>
          new Promise<Server>((resolve) => {
            const server = createServer();
            server.listen(port, config.sites.host, () => resolve(server));
          }),
      ),
    );
    const lines: string[] = [];
    const log = console.log;
    console.log = (line: string) => lines.push(line);
    const stop = new AbortController();
    try {
      const running = runWorkers({ config, secrets: stack.secrets }, ['control', 'browser'], stop.signal, { onPolling: () => stop.abort() });
      await running;
    } finally {
      console.log = log;
      for (const holder of holders) holder.close();
    }
    assert.match(
      lines.join('\n'),
      /not serving browser work: the embedded sites' ports are held \(shopping 127\.0\.0\.1:\d+.*\), probably by another worker on this machine/,
    );
    assert.match(lines.join('\n'), /worker polling task queues 'webrl-control' on /);
  });

  test('a task whose start_url is not http(s) or a site placeholder is refused', async () => {
    const file = join(stack.dir, 'script-tasks.json');
    const task = {
      sites: ['shopping'],
      task_id: 7,
      start_url: 'javascript:alert(1)',
      intent: 'x',
      eval: { eval_types: ['string_match'], reference_answers: { exact_match: 'x' } },
    };
    await writeFile(file, JSON.stringify([task]));
    const run = await runWebrl(['tasks', 'validate', file]);
    assert.equal(run.code, 1, run.output);
    assert.match(run.output, /start_url.*expected an http\(s\) URL or a site placeholder/);
  });

  test('an empty campaign file is refused', async () => {
    const empty = join(stack.dir, 'empty.yaml');
    await writeFile(empty, '');
    const run = await runWebrl(['config', 'check', empty]);
    assert.equal(run.code, 1);
    assert.match(run.output, /the campaign file is empty; it needs at least campaign\.name/);
  });

  test('a task file over the size limit is refused with its size named', async () => {
    const run = await runWebrl(['tasks', 'validate', '--max-bytes', '1000', WEBARENA_LITE_TEST_FILE]);
    assert.equal(run.code, 1);
    assert.match(run.output, /is \d+ bytes, over the 1000-byte limit for a task file/);
  });
});
