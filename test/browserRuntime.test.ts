import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import { test } from 'node:test';
import { BrowserRuntime } from '../activities/campaign/browserRuntime';
import { embeddedSitesOf } from '../env/backends/embedded/workerSites';
import { parseConfig } from '../config/load';
import { freePort, portIsFree } from '../infra/processes';

const hold = (port: number) =>
  new Promise<Server>((resolve) => {
    const server = createServer();
    server.listen(port, '127.0.0.1', () => resolve(server));
  });

test("a held site port fails the sites' start clearly, and a later attempt starts them once the port is free", async () => {
  const ports = { shopping: await freePort(), shopping_admin: await freePort(), reddit: await freePort(), gitlab: await freePort() };
  const holder = await hold(ports.reddit);
  const runtime = await BrowserRuntime.start(parseConfig({ campaign: { name: 'held-port' }, sites: { ports }, concurrency: { browserContexts: 1 } }));
  try {
    await assert.rejects(
      embeddedSitesOf(runtime, 1),
      new RegExp(`embedded reddit site cannot listen on 127\\.0\\.0\\.1:${ports.reddit}: another process holds that port`),
    );
    // The fix it names is a flag the main job and the worker take (test/mainJob.test.ts checks they do) or the config key.
    await assert.rejects(embeddedSitesOf(runtime, 1), /--site-ports reddit=PORT, or sites\.ports\.reddit in the campaign file/);
    assert.ok(await portIsFree('127.0.0.1', ports.shopping), 'the sites started before the failure were stopped');
    await new Promise((resolve) => holder.close(resolve));
    // The activity's retry asks again: the failed start is not kept.
    const sites = await embeddedSitesOf(runtime, 1);
    assert.equal(sites.sites.reddit.port, ports.reddit);
    assert.equal((await fetch(`${sites.sites.reddit.origin}/__webrl/health`)).status, 200);
  } finally {
    holder.close();
    await runtime.close();
  }
});
