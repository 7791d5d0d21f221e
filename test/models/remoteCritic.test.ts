/**
 * Critics that are not trained here: a user-supplied ONNX file (checked when loaded) and an HTTP
 * endpoint speaking the webrl.critic/1 JSON protocol (batched, retried, with clear failures).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inMemoryModel, networkShape, saveModel } from '../../models/checkpoint';
import { Critic } from '../../models/critic';
import { STATE_ROW_WIDTH } from '../../models/featurizer';
import { createNetwork, PARAMETER_NAMES, type Network } from '../../models/network';
import { exportOnnx } from '../../models/onnxGraph';
import { createHttpCritic, CRITIC_PROTOCOL } from '../../models/remote/httpCritic';
import { loadOnnxFileCritic } from '../../models/remote/onnxFileCritic';
import { SeededRng } from '../../browser/rng';
import type { ModelState } from '../../models/state';
import { render } from './fixtures/shop';
import { startServer, type RecordedRequest, type Reply, type TestServer } from './fixtures/servers';

let dir: string;
let server: TestServer;
let behaviour: (request: RecordedRequest) => Reply;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'models-remote-critic-'));
  server = await startServer((request) => behaviour(request));
});

after(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

const states: ModelState[] = [
  { intent: 'What is the price of "Blue Kettle"?', history: [], observation: render({ kind: 'home' }) },
  {
    intent: 'What is the price of "Blue Kettle"?',
    history: [{ response: 'do(action="Search", argument="Blue Kettle", element="0")', action: null }],
    observation: render({ kind: 'search', query: 'Blue Kettle' }),
  },
  { intent: 'Add Red Backpack to the cart', history: [], observation: render({ kind: 'home' }) },
  { intent: 'Add Red Backpack to the cart', history: [], observation: render({ kind: 'product', slug: 'red-backpack', added: false }) },
  { intent: 'Add Red Backpack to the cart', history: [], observation: render({ kind: 'product', slug: 'red-backpack', added: true }) },
];

function randomNetwork(outputs: number, seed: number): Network {
  const network = createNetwork({ ...networkShape('critic', 4), outputs }, seed);
  const rng = new SeededRng(seed);
  for (const name of PARAMETER_NAMES) for (let i = 0; i < network.params[name].length; i++) network.params[name][i] = (rng.next() - 0.5) * 0.4;
  return network;
}

describe('ONNX-file critic', () => {
  test('a checkpoint of this project gives the same values as the local critic', async () => {
    const network = randomNetwork(2, 1);
    const path = join(dir, 'critic.onnx');
    await saveModel(path, network, {
      kind: 'critic',
      seed: 1,
      training: { data: [], objective: 'critic', steps: 0, examples: 0, hyperparameters: {} },
      metrics: {},
    });
    const values = await (await loadOnnxFileCritic(path)).values(states);
    const local = await new Critic(inMemoryModel(network, 'critic')).values(states);
    values.forEach((v, i) => assert.ok(Math.abs(v.v1 - local[i]!.v1) < 1e-5 && Math.abs(v.v2 - local[i]!.v2) < 1e-5));
  });

  test('a single-head graph without a card serves both heads', async () => {
    const path = join(dir, 'one-head.onnx');
    await writeFile(path, exportOnnx(randomNetwork(1, 2), { head: 'sigmoid', outputName: 'value', metadata: {} }, STATE_ROW_WIDTH));
    const values = await (await loadOnnxFileCritic(path)).values(states);
    assert.ok(values.every((v) => v.v1 === v.v2 && v.value > 0 && v.value < 1));
  });

  test('refuses graphs it cannot use, saying why', async () => {
    const wide = join(dir, 'wide.onnx');
    await writeFile(wide, exportOnnx(randomNetwork(2, 3), { head: 'sigmoid', outputName: 'v', metadata: {} }, 128));
    await assert.rejects(loadOnnxFileCritic(wide), /input indices is 128 wide; state rows are 256 wide/);
    const old = join(dir, 'old.onnx');
    await writeFile(
      old,
      exportOnnx(randomNetwork(2, 3), { head: 'sigmoid', outputName: 'v', metadata: { featurizer: 'webrl-hashed-features/0' } }, STATE_ROW_WIDTH),
    );
    await assert.rejects(loadOnnxFileCritic(old), /built for featurizer webrl-hashed-features\/0/);
    const logits = join(dir, 'logits.onnx');
    const big = randomNetwork(2, 4);
    big.params.outBias.fill(5);
    await writeFile(logits, exportOnnx(big, { head: 'identity', outputName: 'v', metadata: {} }, STATE_ROW_WIDTH));
    await assert.rejects((await loadOnnxFileCritic(logits)).values(states), /not a probability/);
  });
});

describe('HTTP critic (webrl.critic/1)', () => {
  const endpoint = (extra = {}) => ({ baseURL: `${server.url}/critic/`, retryDelayMs: 1, maxAttempts: 3, batchSize: 2, ...extra });

  test('sends the protocol in batches and reads one or two heads per state', async () => {
    behaviour = (request) => {
      const body = request.body as { states: unknown[] };
      return { json: { values: body.states.map((_, i) => (i === 0 ? [0.25, 0.5] : [0.75])) } };
    };
    const start = server.requests.length;
    const values = await createHttpCritic(endpoint()).values(states);
    assert.deepEqual(
      values.map((v) => [v.v1, v.v2, v.value]),
      [
        [0.25, 0.5, 0.25],
        [0.75, 0.75, 0.75],
        [0.25, 0.5, 0.25],
        [0.75, 0.75, 0.75],
        [0.25, 0.5, 0.25],
      ],
    );
    const requests = server.requests.slice(start);
    assert.deepEqual(
      requests.map((r) => [r.method, r.url, (r.body as { states: unknown[] }).states.length]),
      [
        ['POST', '/critic/values', 2],
        ['POST', '/critic/values', 2],
        ['POST', '/critic/values', 1],
      ],
    );
    const first = requests[0]!.body as { protocol: string; states: { intent: string; history: string[]; observation: Record<string, string> }[] };
    assert.equal(first.protocol, CRITIC_PROTOCOL);
    assert.deepEqual(first.states[1]!.history, ['do(action="Search", argument="Blue Kettle", element="0")']);
    assert.deepEqual(Object.keys(first.states[1]!.observation), ['url', 'title', 'html']);
  });

  test('replies that break the protocol are retried, then fail clearly', async () => {
    let calls = 0;
    behaviour = (request) =>
      calls++ === 0 ? { text: 'not json' } : { json: { values: (request.body as { states: unknown[] }).states.map(() => [0.5, 0.5]) } };
    assert.equal((await createHttpCritic(endpoint()).values(states.slice(0, 1)))[0]!.value, 0.5);
    behaviour = () => ({ json: { values: [[1.5, 0.2]] } });
    await assert.rejects(createHttpCritic(endpoint()).values(states.slice(0, 1)), /failed after 3 attempt\(s\): the reply breaks webrl\.critic\/1: values\.0/);
    behaviour = () => ({ json: { values: [] } });
    await assert.rejects(createHttpCritic(endpoint()).values(states.slice(0, 1)), /0 values for 1 states/);
  });

  test('a request names the checkpoint to value with; a reply from another critic breaks the protocol', async () => {
    const checkpoint = 'campaigns/c/phase-1/checkpoints/critic';
    let held = checkpoint;
    behaviour = (request) => {
      const body = request.body as { critic?: string; states: unknown[] };
      return { json: { critic: held, values: body.states.map(() => [0.5, 0.5]) } };
    };
    const before = server.requests.length;
    assert.equal((await createHttpCritic(endpoint({ critic: checkpoint })).values(states.slice(0, 1)))[0]!.value, 0.5);
    assert.equal((server.requests[before]!.body as { critic?: string }).critic, checkpoint);
    held = 'campaigns/c/phase-0/checkpoints/critic';
    await assert.rejects(
      createHttpCritic(endpoint({ critic: checkpoint })).values(states.slice(0, 1)),
      /the reply is from the critic "campaigns\/c\/phase-0\/checkpoints\/critic", not "campaigns\/c\/phase-1\/checkpoints\/critic"/,
    );
    // A critic not named (a fixed one): the request carries none, and any reply's name is taken.
    await createHttpCritic(endpoint()).values(states.slice(0, 1));
    assert.equal('critic' in (server.requests.at(-1)!.body as object), false);
  });

  test('a slow server times out after bounded retries; a 404 fails at once; the key is sent as a bearer token', async () => {
    process.env.WEBRL_TEST_CRITIC_KEY = 'critic-secret';
    try {
      behaviour = () => 'hang';
      let before = server.requests.length;
      await assert.rejects(
        createHttpCritic(endpoint({ timeoutMs: 150, maxAttempts: 2, apiKeyEnv: 'WEBRL_TEST_CRITIC_KEY' })).values(states.slice(0, 1)),
        (error: unknown) => {
          assert.match((error as Error).message, /failed after 2 attempt\(s\)/);
          assert.ok(!(error as Error).message.includes('critic-secret'));
          return true;
        },
      );
      assert.equal(server.requests.length - before, 2);
      assert.equal(server.requests[before]!.headers.authorization, 'Bearer critic-secret');
      behaviour = () => ({ status: 404, text: 'no such route' });
      before = server.requests.length;
      await assert.rejects(createHttpCritic(endpoint()).values(states.slice(0, 1)), /failed after 1 attempt\(s\): HTTP 404/);
      assert.equal(server.requests.length - before, 1);
    } finally {
      delete process.env.WEBRL_TEST_CRITIC_KEY;
    }
  });
});
