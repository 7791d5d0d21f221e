/**
 * The local actor: log-probs of arbitrary action strings (with the floor for actions it cannot
 * produce), greedy and seeded sampling, behaviour cloning that generalises to held-out tasks of the
 * simulated shop, and the Policy adapter the episode loop uses.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Actor, ACTION_TOKENS, FLOOR_LOG_PROB } from '../../models/actor';
import { createActorPolicy } from '../../models/actorPolicy';
import { loadModel } from '../../models/checkpoint';
import { SeededRng } from '../../browser/rng';
import type { ModelState } from '../../models/state';
import { train } from '../../models/train/trainer';
import { demonstrations, TEST_TASKS, TRAIN_TASKS } from './fixtures/data';
import { render, rollout } from './fixtures/shop';

let dir: string;
let actor: Actor;
let memoryActor: Actor;
const productState: ModelState = {
  intent: 'What is the price of "Blue Kettle"?',
  history: [{ response: 'do(action="Search", argument="Blue Kettle", element="0")', action: { kind: 'Search', element: 0, argument: 'Blue Kettle' } }],
  observation: render({ kind: 'product', slug: 'blue-kettle', added: false }),
};

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'models-actor-'));
  const result = await train({
    objective: 'actor-sft',
    data: { records: await demonstrations(TRAIN_TASKS) },
    outPath: join(dir, 'actor.onnx'),
    seed: 1,
    epochs: 4,
    batchSize: 8,
  });
  assert.equal(result.metrics.coveredDemonstrations, 1, 'every oracle step is a candidate');
  actor = new Actor(await loadModel(join(dir, 'actor.onnx'), { kind: 'actor' }));
  memoryActor = new Actor(await loadModel(join(dir, 'actor.onnx'), { kind: 'actor', engine: 'memory' }));
});

after(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('log-probs of action strings', () => {
  test('a candidate gets its softmax log-prob; comments before the call are ignored; one token per action', async () => {
    const [distribution] = await actor.distributions([productState]);
    const total = distribution!.logProbs.reduce((sum, lp) => sum + Math.exp(lp), 0);
    assert.ok(Math.abs(total - 1) < 1e-9);
    const click = distribution!.candidates.findIndex((c) => c.key === 'do(action="Click", element="3")');
    const [plain, commented] = await actor.logProbs([
      { state: productState, response: 'do(action="Click", element="3")' },
      { state: productState, response: "# Element: the 'Add to Cart' button\ndo(action='Click', element=3)" },
    ]);
    assert.equal(plain!.logProb, distribution!.logProbs[click]);
    assert.deepEqual(commented, plain);
    assert.deepEqual([plain!.tokens, plain!.inCandidates, plain!.meanTokenLogProb], [ACTION_TOKENS, true, plain!.logProb]);
  });

  test('unparseable outputs, unknown elements and arguments it never offers get the floor', async () => {
    const results = await actor.logProbs(
      ['I think I should click', 'do(action="Click", element="99")', 'do(action="Type", argument="zzz qqq", element="0")'].map((response) => ({
        state: productState,
        response,
      })),
    );
    for (const result of results) assert.deepEqual([result.logProb, result.inCandidates], [FLOOR_LOG_PROB, false]);
  });

  test('a dropdown argument maps to the option the executor would pick', async () => {
    const withSelect: ModelState = {
      ...productState,
      observation: {
        ...productState.observation,
        html: productState.observation.html.replace(
          '</body>',
          '<select id="9" data-bbox="10,400,100,20"> <option> Red </option> <option> Blue (+$2.00) </option> <option> Light blue </option> </select> </body>',
        ),
      },
    };
    const [partial, full] = await actor.logProbs([
      { state: withSelect, response: 'do(action="Select Dropdown Option", argument="blue", element="9")' },
      { state: withSelect, response: 'do(action="Select Dropdown Option", argument="Blue (+$2.00)", element="9")' },
    ]);
    assert.equal(partial!.inCandidates, true);
    assert.equal(partial!.logProb, full!.logProb);
  });

  test('the ONNX engine and the TypeScript network agree on the trained actor', async () => {
    const states = [productState, { ...productState, history: [], observation: render({ kind: 'home' }) }];
    const [a, b] = [await actor.distributions(states), await memoryActor.distributions(states)];
    a.forEach((distribution, i) => distribution.logProbs.forEach((lp, j) => assert.ok(Math.abs(lp - b[i]!.logProbs[j]!) < 1e-5)));
  });
});

describe('acting', () => {
  test('greedy is deterministic and answers the price', async () => {
    const first = await actor.act(productState, { mode: 'greedy' });
    const again = await actor.act(productState, { mode: 'greedy' });
    assert.deepEqual(first, again);
    assert.equal(first.response, `exit(message="${/\$\d+\.\d\d/.exec(productState.observation.html)![0]}")`);
  });

  test('sampling is reproducible from the seed and spreads out with the temperature', async () => {
    const draws = async (seed: number, temperature: number) => {
      const rng = new SeededRng(seed);
      const out: string[] = [];
      for (let i = 0; i < 40; i++) out.push((await actor.act(productState, { mode: 'sample', temperature, rng })).response);
      return out;
    };
    assert.deepEqual(await draws(5, 1), await draws(5, 1));
    assert.ok(new Set(await draws(5, 50)).size > new Set(await draws(5, 0.2)).size);
  });

  test('behaviour cloning solves held-out shop tasks', async () => {
    let solved = 0;
    for (const task of TEST_TASKS) {
      const trajectory = await rollout(task, async (state) => (await actor.act(state, { mode: 'greedy' })).response);
      if (trajectory.success) solved++;
    }
    assert.ok(solved / TEST_TASKS.length >= 0.9, `${solved}/${TEST_TASKS.length} held-out tasks solved`);
  });

  test('as a browser Policy it answers with a grammar string and the WebRL prompt', async () => {
    const policy = createActorPolicy(actor, { mode: 'sample', temperature: 1, seed: 3 });
    const input = {
      task: { task_id: 7, intent: productState.intent, start_url: 'http://shop.test/' },
      observation: productState.observation,
      history: productState.history,
    };
    const output = await policy.act(input);
    assert.deepEqual(await policy.act(input), output, 'seeded by (seed, task, round)');
    assert.match(output.prompt, /^Task Instruction: What is the price/);
    assert.ok(output.prompt.endsWith('<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n'));
    assert.match(output.response, /^(do|exit)\(/);
  });
});
