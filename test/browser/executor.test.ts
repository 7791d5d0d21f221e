import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext } from 'playwright-core';
import type { Action } from '../../browser/contract';
import { InfrastructureError } from '../../browser/errors';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ActionExecutor, DEFAULT_EXECUTOR_OPTIONS, executorOptionsFor, type ExecutorOptions } from '../../browser/executor';
import { elementWithText, launchChromium, newContext, PAGES_DIR } from './helpers';

/** Pages of the test server: body, and how long the server waits before answering. */
const ROUTES: Record<string, { body: string; delayMs?: number; type?: string }> = {
  '/start': {
    body: `<title>Start</title>
      <a href="/second">Second page</a> <a href="/slow">Slow page</a> <a href="/second" target="_blank">New tab</a>
      <form action="/second"><input name="q" value="old text"></form>
      <select id="size"><option>Small</option><option>Medium large</option><option>Large</option></select>
      <a href="#" id="hover" onmouseover="this.textContent='Hovered'">Hover me</a>
      <button onclick="this.remove()">Vanishing</button>
      <button onclick="fetch('/api').then((r) => r.text()).then((t) => { document.getElementById('out').textContent = t; })">Fetch</button>
      <button onclick="setTimeout(() => { document.getElementById('out').textContent = 'timer done'; }, 10)">Timer</button>
      <button onclick="setInterval(() => { document.getElementById('out').textContent = String(Math.random()); }, 5)">Ticker</button>
      <button onclick="document.getElementById('out').textContent = confirm('Sure?') ? 'confirmed' : 'dismissed'">Confirm</button>
      <button onclick="while (true) {}">Hang</button>
      <p id="out"></p>
      <iframe src="/frame" width="300" height="60"></iframe>
      <div style="height:3000px">Tall</div>`,
  },
  '/second': { body: '<title>Second</title><h1>Second page</h1><a href="/start">Back to start</a>' },
  '/slow': { body: '<title>Slow</title><h1>Slow page</h1>', delayMs: 400 },
  '/frame': { body: `<button onclick="document.body.insertAdjacentHTML('beforeend', '<p>frame clicked</p>')">Frame button</button>` },
  '/api': { body: 'fetched later', delayMs: 300, type: 'text/plain' },
  '/autocomplete': { body: readFileSync(join(PAGES_DIR, 'autocomplete.html'), 'utf8') },
};

let server: Server;
let base: string;
let browser: Browser;
let context: BrowserContext;

before(async () => {
  server = createServer((request, response) => {
    const route = ROUTES[new URL(request.url ?? '/', 'http://x').pathname];
    if (!route) return void response.writeHead(404).end();
    setTimeout(() => {
      response.writeHead(200, { 'content-type': route.type ?? 'text/html' });
      response.end(route.body);
    }, route.delayMs ?? 0);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await launchChromium();
});

after(async () => {
  await browser.close();
  server.closeAllConnections();
  server.close();
});

const FAST: ExecutorOptions = { ...DEFAULT_EXECUTOR_OPTIONS, settle: { quietMs: 25, capMs: 250 } };

async function start(options: ExecutorOptions = FAST, path = '/start'): Promise<ActionExecutor> {
  context = await newContext(browser);
  return ActionExecutor.open(context, `${base}${path}`, options);
}

async function act(executor: ActionExecutor, build: (o: Awaited<ReturnType<ActionExecutor['observe']>>) => Action) {
  const observation = await executor.observe();
  return executor.execute(build(observation));
}

describe('ActionExecutor', () => {
  test('Click follows a link and settles on the new page', async () => {
    const executor = await start();
    const result = await act(executor, (o) => ({ kind: 'Click', element: elementWithText(o, 'Second page').id }));
    assert.equal(result.ok, true);
    const after = await executor.observe();
    assert.equal(after.url, `${base}/second`);
    assert.match(after.html, /<h1 [^>]*> Second page <\/h1>/);
    await context.close();
  });

  test('a slow navigation is waited for beyond the settle cap', async () => {
    const executor = await start();
    await act(executor, (o) => ({ kind: 'Click', element: elementWithText(o, 'Slow page').id }));
    const after = await executor.observe();
    assert.equal(after.title, 'Slow');
    await context.close();
  });

  test('Type replaces the field content; Search also presses Enter', async () => {
    const executor = await start();
    const field = (o: Awaited<ReturnType<ActionExecutor['observe']>>) => o.elements.find((e) => e.attributes.name === 'q')!.id;
    await act(executor, (o) => ({ kind: 'Type', element: field(o), argument: 'red shoes' }));
    const typed = await executor.observe();
    assert.equal(typed.elements.find((e) => e.attributes.name === 'q')?.value, 'red shoes');
    assert.match(typed.html, /value="red shoes"/);
    await act(executor, (o) => ({ kind: 'Search', element: field(o), argument: 'blue hat' }));
    assert.equal((await executor.observe()).url, `${base}/second?q=blue+hat`);
    await context.close();
  });

  test('Select Dropdown Option picks the first option containing the text, case-insensitively', async () => {
    const executor = await start();
    const size = (o: Awaited<ReturnType<ActionExecutor['observe']>>) => o.elements.find((e) => e.tag === 'select')!.id;
    const chosen = await act(executor, (o) => ({ kind: 'Select Dropdown Option', element: size(o), argument: 'LARGE' }));
    assert.equal(chosen.ok, true);
    assert.equal((await executor.observe()).elements.find((e) => e.tag === 'select')?.selectedOption, 'Medium large');
    const missing = await act(executor, (o) => ({ kind: 'Select Dropdown Option', element: size(o), argument: 'XXL' }));
    assert.equal(missing.ok, false);
    assert.match(missing.error ?? '', /no option .* "XXL" .*"Small", "Medium large", "Large"/);
    await context.close();
  });

  test('Hover moves the mouse onto the element', async () => {
    const executor = await start();
    await act(executor, (o) => ({ kind: 'Hover', element: elementWithText(o, 'Hover me').id }));
    assert.match((await executor.observe()).html, /Hovered/);
    await context.close();
  });

  test('Scroll Down and Up move by two thirds of the viewport', async () => {
    const executor = await start();
    await executor.execute({ kind: 'Scroll Down' });
    assert.equal(await executor.page.evaluate(() => window.scrollY), 480);
    await executor.execute({ kind: 'Scroll Down' });
    await executor.execute({ kind: 'Scroll Up' });
    assert.equal(await executor.page.evaluate(() => window.scrollY), 480);
    await context.close();
  });

  test('Go Backward and Go Forward walk the history', async () => {
    const executor = await start();
    await act(executor, (o) => ({ kind: 'Click', element: elementWithText(o, 'Second page').id }));
    await executor.execute({ kind: 'Go Backward' });
    assert.equal((await executor.observe()).url, `${base}/start`);
    await executor.execute({ kind: 'Go Forward' });
    assert.equal((await executor.observe()).url, `${base}/second`);
    await context.close();
  });

  test('an id that no longer exists is a failed step, not a crash', async () => {
    const executor = await start();
    const observation = await executor.observe();
    const vanishing = elementWithText(observation, 'Vanishing').id;
    assert.equal((await executor.execute({ kind: 'Click', element: vanishing })).ok, true);
    const again = await executor.execute({ kind: 'Click', element: vanishing });
    assert.equal(again.ok, false);
    assert.match(again.error ?? '', /not on the page/);
    assert.equal((await executor.execute({ kind: 'Type', element: 999, argument: 'x' })).ok, false);
    await context.close();
  });

  test('a new tab opened by a click becomes the current page', async () => {
    const executor = await start();
    const first = executor.page;
    await act(executor, (o) => ({ kind: 'Click', element: elementWithText(o, 'New tab').id }));
    assert.notEqual(executor.page, first);
    const after = await executor.observe();
    assert.equal(after.url, `${base}/second`);
    assert.equal(context.pages().length, 2);
    await context.close();
  });

  test('settling waits for requests the action started and for short timers', async () => {
    const executor = await start(DEFAULT_EXECUTOR_OPTIONS);
    const fetched = await act(executor, (o) => ({ kind: 'Click', element: elementWithText(o, 'Fetch').id }));
    assert.match((await executor.observe()).html, /fetched later/);
    assert.ok(fetched.settleMs >= 200, `settled after ${fetched.settleMs} ms, before the 300 ms response`);
    await act(executor, (o) => ({ kind: 'Click', element: elementWithText(o, 'Timer').id }));
    assert.match((await executor.observe()).html, /timer done/);
    await context.close();
  });

  for (const profile of ['default', 'webrl'] as const) {
    test(`${profile} profile: a suggestion list shown 300 ms after typing is observed with its suggestions`, async () => {
      const executor = await start(executorOptionsFor(profile), '/autocomplete');
      const typed = await act(executor, (o) => ({ kind: 'Type', element: o.elements.find((e) => e.tag === 'input')!.id, argument: 'ber' }));
      assert.ok(typed.settleMs >= 250, `settled after ${typed.settleMs} ms, before the suggestions`);
      const observation = await executor.observe();
      for (const city of ['Berlin', 'Bern', 'Bergen']) assert.match(observation.html, new RegExp(`> ${city} </li>`));
      assert.doesNotMatch(observation.html, /Boston/);
      await context.close();
    });
  }

  test('settling waits for animation frames the page requests', async () => {
    const executor = await start(DEFAULT_EXECUTOR_OPTIONS, '/autocomplete');
    await act(executor, (o) => ({ kind: 'Click', element: elementWithText(o, 'Reveal').id }));
    assert.match((await executor.observe()).html, /revealed after 12 frames/);
    await context.close();
  });

  test('a quiet page waits no longer than the minimum: none for the default profile, 500 ms for webrl', async () => {
    for (const [profile, least, most] of [
      ['default', 0, 250],
      ['webrl', 500, 900],
    ] as const) {
      const executor = await start(executorOptionsFor(profile), '/autocomplete');
      const result = await act(executor, (o) => ({ kind: 'Click', element: elementWithText(o, 'Nothing').id }));
      assert.ok(result.settleMs >= least && result.settleMs < most, `${profile}: settled after ${result.settleMs} ms`);
      await context.close();
    }
  });

  test('a page that never stops changing is observed once the settle cap passes', async () => {
    const executor = await start();
    const result = await act(executor, (o) => ({ kind: 'Click', element: elementWithText(o, 'Ticker').id }));
    assert.equal(result.ok, true);
    assert.ok(result.settleMs >= 200 && result.settleMs < 5000, `settle took ${result.settleMs} ms`);
    await context.close();
  });

  test('dialogs are accepted', async () => {
    const executor = await start();
    await act(executor, (o) => ({ kind: 'Click', element: elementWithText(o, 'Confirm').id }));
    assert.match((await executor.observe()).html, /confirmed/);
    await context.close();
  });

  test('elements inside a same-origin iframe can be clicked', async () => {
    const executor = await start();
    await act(executor, (o) => ({ kind: 'Click', element: elementWithText(o, 'Frame button').id }));
    assert.match((await executor.observe()).html, /frame clicked/);
    await context.close();
  });

  test('a hung page ends the step with an infrastructure error within the step timeout', async () => {
    const executor = await start({ ...FAST, stepTimeoutMs: 3000 });
    const hang = elementWithText(await executor.observe(), 'Hang').id;
    const clickThenLook = async () => {
      await executor.execute({ kind: 'Click', element: hang });
      await executor.observe();
    };
    await assert.rejects(clickThenLook(), (error: unknown) => {
      assert.ok(error instanceof InfrastructureError);
      assert.equal(error.reason, 'step_timeout');
      return true;
    });
  });
});
