import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { freePort, portIsFree } from '../infra/processes';

test('freePort hands out distinct free ports that no outgoing connection can take in the meantime', async () => {
  const [low, high] = (await readFile('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')).trim().split(/\s+/).map(Number) as [number, number];
  const ports = await Promise.all(Array.from({ length: 32 }, () => freePort()));
  assert.equal(new Set(ports).size, ports.length, 'a port was handed out twice');
  for (const port of ports) {
    assert.ok(port < low || port > high, `port ${port} lies in the ephemeral range ${low}-${high}`);
    assert.ok(await portIsFree('127.0.0.1', port));
  }
});
