/**
 * Issue 56, the observation and the executor on every page, each case on a small page of our own that
 * isolates it and on a real MiniWoB++ page (seeded, from the wheel):
 * 1. a Scroll Down inside a scrolling box moves by two thirds of that box, so every item shows once;
 * 2. Type into every typed input (date, time, datetime-local, month, week, number, range, color, email,
 *    password, search) takes effect, and a Type that did not is a failed step;
 * 3. `default` gives ids to icons drawn with `content: url(...)` inside a clickable row;
 * 4. elements clickable only through script listeners get ids in both profiles;
 * 5. sprite icons are named by their class (`ui-icon-triangle-1-n`: up arrow), not by the sprite file,
 *    and an image's hover state does not rename it;
 * 6. a link that wraps onto two lines gets an id in both profiles, though the centre of its box is over
 *    other text (phone-book's addresses).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import type { Observation } from '../../browser/contract';
import { ActionExecutor, executorOptionsFor } from '../../browser/executor';
import { dateTimeValue, dateValue, monthValue, pickerValue, timeValue, weekValue } from '../../browser/fieldValues';
import type { ObservationProfile } from '../../browser/observe';
import { serveDirectory, type StaticServer } from '../../browser/staticServer';
import { prepareMiniwobContext } from '../../env/backends/miniwob/episode';
import { ensureMiniwobPages } from '../../env/backends/miniwob/package';
import { launchChromium, newContext, PAGES_DIR } from './helpers';

let browser: Browser;
let pages: StaticServer;
let miniwob: StaticServer;

before(async () => {
  browser = await launchChromium();
  pages = await serveDirectory(PAGES_DIR);
  miniwob = await serveDirectory((await ensureMiniwobPages()).root);
});
after(async () => {
  await browser?.close();
  await pages?.close();
  await miniwob?.close();
});

/** Runs `work` on an executor opened at a fixture page, or at a seeded MiniWoB++ page (`miniwob:<type>:<seed>`). */
async function onPage<T>(where: string, profile: ObservationProfile, work: (executor: ActionExecutor) => Promise<T>): Promise<T> {
  const context = await newContext(browser);
  try {
    const task = /^miniwob:([\w-]+):(\d+)$/.exec(where);
    if (task) await prepareMiniwobContext(context, Number(task[2]), null);
    const url = task ? `${miniwob.url}/miniwob/${task[1]}.html?seed=${task[2]}` : `${pages.url}/${where}`;
    return await work(await ActionExecutor.open(context, url, executorOptionsFor(profile, 0)));
  } finally {
    await context.close();
  }
}

/** The id of the element printed with this name (`data-label` in default, `title` in webrl), or undefined. */
function idNamed(observation: Observation, name: string, nth = 0): number | undefined {
  const ids = Array.from(observation.html.matchAll(/<\w+ id="(\d+)"[^>]*? (?:data-label|title)="([^"]*)"/g))
    .filter((m) => m[2] === name)
    .map((m) => Number(m[1]));
  return ids[nth];
}

const idOf = (observation: Observation, elementId: string) => observation.elements.find((e) => e.attributes.id === elementId)?.id;

describe('1. scrolling inside a scrolling box', () => {
  test('every item of a list in a 150 px box shows while scrolling down; at the end a Scroll Down fails', async () => {
    await onPage('scroll-box.html', 'default', async (executor) => {
      const seen = new Set<string>();
      const collect = async () => {
        for (const match of (await executor.observe()).html.matchAll(/Item \d+/g)) seen.add(match[0]);
      };
      await collect();
      const box = () => executor.page.evaluate(() => document.getElementById('box')!.scrollTop);
      for (let step = 0; step < 10; step++) {
        const result = await executor.execute({ kind: 'Scroll Down' });
        if (!result.ok) {
          assert.equal(result.error, 'nothing on the page can scroll down');
          break;
        }
        if (step === 0) assert.equal(await box(), 100, 'two thirds of the 150 px box, not of the window');
        await collect();
      }
      assert.deepEqual([...seen].sort(), Array.from({ length: 12 }, (_, i) => `Item ${i + 1}`).sort());
    });
  });

  test('MiniWoB++ social-media: scrolling its 150 px box shows every post', async () => {
    await onPage('miniwob:social-media:5', 'default', async (executor) => {
      const bodies = await executor.page.evaluate(() => Array.from(document.querySelectorAll('#area .media .body'), (body) => body.textContent!));
      let printed = (await executor.observe()).html;
      for (let step = 0; step < 12 && (await executor.execute({ kind: 'Scroll Down' })).ok; step++) printed += (await executor.observe()).html;
      assert.ok(bodies.length >= 5);
      assert.deepEqual(
        bodies.filter((body) => !printed.includes(body)),
        [],
        'posts never shown',
      );
    });
  });
});

describe('2. typing into typed inputs', () => {
  test('the typed text means a value of the field (a date as people write it, a time with AM/PM, ...)', () => {
    assert.equal(dateValue('03/15/2016'), '2016-03-15');
    assert.equal(dateValue('2016-03-15'), '2016-03-15');
    assert.equal(dateValue('March 15, 2016'), '2016-03-15');
    assert.equal(dateValue('15 Mar 2016'), '2016-03-15');
    assert.equal(dateValue('02/30/2016'), undefined);
    assert.equal(timeValue('3:57 PM'), '15:57');
    assert.equal(timeValue('12:05 am'), '00:05');
    assert.equal(timeValue('23:10:05'), '23:10:05');
    assert.equal(timeValue('25:00'), undefined);
    assert.equal(dateTimeValue('03/15/2016 at 3:57 PM'), '2016-03-15T15:57');
    assert.equal(monthValue('March 2016'), '2016-03');
    assert.equal(weekValue('2016-W12'), '2016-W12');
    assert.equal(pickerValue('range', '40'), '40');
    assert.equal(pickerValue('range', 'loud'), undefined);
  });

  const CASES: [string, string, string][] = [
    ['date', '03/15/2016', '2016-03-15'],
    ['time', '3:57 PM', '15:57'],
    ['datetime-local', '2016-03-15 15:57', '2016-03-15T15:57'],
    ['month', 'March 2016', '2016-03'],
    ['week', '2016-W12', '2016-W12'],
    ['number', '-42', '-42'],
    ['range', '40', '40'],
    ['color', 'red', '#ff0000'],
    ['email', 'ann@example.com', 'ann@example.com'],
    ['password', 'hunter2', 'hunter2'],
    ['search', 'red shoes', 'red shoes'],
  ];
  const PICKED = new Set(['date', 'time', 'datetime-local', 'month', 'week', 'range', 'color']);
  test('Type into <input> of every type takes effect; a picker fires change', async () => {
    await onPage('typed-inputs.html', 'default', async (executor) => {
      for (const [type, typed, value] of CASES) {
        const field = idOf(await executor.observe(), type)!;
        const result = await executor.execute({ kind: 'Type', element: field, argument: typed });
        assert.deepEqual({ ok: result.ok, error: result.error }, { ok: true, error: undefined }, type);
        assert.equal(await executor.page.evaluate((id) => (document.getElementById(id) as HTMLInputElement).value, type), value);
        // A picker commits with a change event; a keyed field fires its change when it loses focus, as for a person.
        const changed = await executor.page.evaluate(() => document.getElementById('changes')!.textContent!.split(' '));
        assert.equal(changed.includes(type) || !PICKED.has(type), true, `${type} fired change`);
      }
    });
  });

  test('a Type that did not take effect fails: no such date, letters into a number, a field that swallows the keys, no field', async () => {
    await onPage('typed-inputs.html', 'default', async (executor) => {
      const o = await executor.observe();
      const bad = await executor.execute({ kind: 'Type', element: idOf(o, 'date')!, argument: '02/30/2016' });
      assert.deepEqual([bad.ok, bad.error], [false, `element ${idOf(o, 'date')} is a date field: "02/30/2016" is not a date`]);
      const letters = await executor.execute({ kind: 'Type', element: idOf(o, 'number')!, argument: 'many' });
      assert.deepEqual([letters.ok, letters.error], [false, `element ${idOf(o, 'number')} holds "" after typing "many"`]);
      const range = await executor.execute({ kind: 'Type', element: idOf(o, 'range')!, argument: '42' });
      assert.deepEqual([range.ok, range.error], [false, `element ${idOf(o, 'range')} holds "40", not "42"`], 'a range keeps to its step');
      const locked = await executor.execute({ kind: 'Type', element: idOf(o, 'locked')!, argument: '7' });
      assert.deepEqual([locked.ok, locked.error], [false, `element ${idOf(o, 'locked')} holds "0" after typing "7"`]);
      const secret = await executor.execute({ kind: 'Type', element: idOf(o, 'password')!, argument: 'a\nb' });
      assert.ok(secret.ok, 'a line break is dropped from a one-line field');
    });
    await onPage('script-controls.html', 'default', async (executor) => {
      const o = await executor.observe();
      const notField = await executor.execute({ kind: 'Type', element: idOf(o, 'bound')!, argument: 'hello' });
      assert.deepEqual([notField.ok, notField.error], [false, `element ${idOf(o, 'bound')} is not a text field`]);
    });
  });

  test('MiniWoB++ enter-date and enter-time take the values as the instruction writes them; use-spinner does not take keys', async () => {
    for (const [type, pattern] of [
      ['enter-date', /^Enter (\S+) as the date/],
      ['enter-time', /^Enter (.+?) as the time/],
    ] as const) {
      await onPage(`miniwob:${type}:3`, 'webrl', async (executor) => {
        const typed = pattern.exec((await executor.page.locator('#query').textContent())!)![1]!;
        const field = (await executor.observe()).elements.find((e) => e.tag === 'input')!.id;
        assert.equal((await executor.execute({ kind: 'Type', element: field, argument: typed })).ok, true);
        const submit = (await executor.observe()).elements.find((e) => e.tag === 'button')!.id;
        await executor.execute({ kind: 'Click', element: submit });
        assert.equal(
          await executor.page.evaluate(() => (window as unknown as { WOB_RAW_REWARD_GLOBAL: number }).WOB_RAW_REWARD_GLOBAL),
          1,
          `${type}: ${typed}`,
        );
      });
    }
    await onPage('miniwob:use-spinner:1', 'default', async (executor) => {
      const field = (await executor.observe()).elements.find((e) => e.tag === 'input')!.id;
      const typed = await executor.execute({ kind: 'Type', element: field, argument: '5' });
      assert.deepEqual([typed.ok, typed.error], [false, `element ${field} holds "0" after typing "5"`]);
    });
  });
});

describe('3-5. icons and script-bound controls', () => {
  for (const profile of ['default', 'webrl'] as const) {
    test(`${profile}: a span with a click listener gets an id and works; one whose listener was removed gets none; row icons and sprite arrows are named`, async () => {
      await onPage('script-controls.html', profile, async (executor) => {
        const o = await executor.observe();
        assert.ok(idOf(o, 'bound') !== undefined, o.html);
        assert.equal(idOf(o, 'unbound'), undefined);
        assert.equal(idOf(o, 'removed'), undefined);
        assert.equal(idNamed(o, 'reply'), idOf(o, 'bound'), 'named after its image; the hover image does not rename it');
        for (const icon of ['star', 'delete', 'up arrow', 'down arrow', 'close']) assert.ok(idNamed(o, icon) !== undefined, `${icon} in ${o.html}`);
        assert.doesNotMatch(o.html, /ui icons/);
        assert.equal((await executor.execute({ kind: 'Click', element: idOf(o, 'bound')! })).ok, true);
        assert.match((await executor.observe()).html, /replied/);
        assert.equal(idNamed(await executor.observe(), 'reply'), idOf(o, 'bound'), 'hovered, still "reply"');
      });
    });

    test(`${profile}: MiniWoB++ social-media's icons and "more" menu, email-inbox's row icons and use-spinner's arrows are actionable and named`, async () => {
      await onPage('miniwob:social-media:1', profile, async (executor) => {
        const o = await executor.observe();
        for (const icon of ['reply', 'retweet', 'like', 'more']) assert.ok(idNamed(o, icon) !== undefined, `${icon} in ${o.html}`);
        assert.equal((await executor.execute({ kind: 'Click', element: idNamed(o, 'more')! })).ok, true);
        const menu = (await executor.observe()).elements.filter((e) => e.tag === 'li').map((e) => e.fullText);
        assert.deepEqual(menu.slice(0, 2), ['Share via DM', 'Copy link to Tweet']);
      });
      await onPage('miniwob:email-inbox:5', profile, async (executor) => {
        const o = await executor.observe();
        assert.ok(idNamed(o, 'star') !== undefined && idNamed(o, 'delete') !== undefined, o.html);
      });
      await onPage('miniwob:use-spinner:1', profile, async (executor) => {
        const o = await executor.observe();
        assert.doesNotMatch(o.html, /ui icons/);
        const up = idNamed(o, 'up arrow')!;
        assert.ok(up !== undefined && idNamed(o, 'down arrow') !== undefined, o.html);
        await executor.execute({ kind: 'Click', element: up });
        await executor.execute({ kind: 'Click', element: up });
        assert.equal(await executor.page.evaluate(() => (document.getElementById('spinner') as HTMLInputElement).value), '2');
        assert.equal(idNamed(await executor.observe(), 'up arrow'), up, 'hovered, still "up arrow"');
      });
    });
  }
});

describe('6. a link that wraps onto two lines', () => {
  for (const profile of ['default', 'webrl'] as const) {
    test(`${profile}: it gets an id and a Click on it follows it; MiniWoB++ phone-book's wrapped address link too`, async () => {
      await onPage('wrapped-link.html', profile, async (executor) => {
        const id = idOf(await executor.observe(), 'wrapped');
        assert.ok(id !== undefined, 'the wrapped link has an id');
        assert.equal((await executor.execute({ kind: 'Click', element: id }))?.ok, true);
        assert.equal(await executor.page.title(), 'followed');
      });
      await onPage('miniwob:phone-book:1', profile, async (executor) => {
        const o = await executor.observe();
        const links = Array.from(o.html.matchAll(/<a id="\d+"[^>]*>([^<]*)<\/a>/g), (m) => m[1]!.trim());
        const address = o.elements.find((e) => e.tag === 'a' && /\d/.test(e.fullText ?? e.text) && /[A-Za-z]/.test(e.text));
        assert.ok(address, `an address link with an id among ${JSON.stringify(links)}`);
      });
    });
  }
});
