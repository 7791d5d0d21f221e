import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import type { Observation } from '../../browser/contract';
import { observe, renderSimplifiedHtml, type ObservationProfile } from '../../browser/observe';
import { serveDirectory, type StaticServer } from '../../browser/staticServer';
import { elementWithText, launchChromium, newContext, PAGES_DIR, texts } from './helpers';

let browser: Browser;
let server: StaticServer;
let page: Page;

before(async () => {
  [browser, server] = await Promise.all([launchChromium(), serveDirectory(PAGES_DIR)]);
  page = await (await newContext(browser)).newPage();
});

after(async () => {
  await browser.close();
  await server.close();
});

/** Loads a fixture page and observes it twice: an unchanged page must give the identical observation. */
async function observeFixture(name: string, profile: ObservationProfile = 'default', setup?: () => Promise<void>): Promise<Observation> {
  await page.goto(`${server.url}/${name}`, { waitUntil: 'load' });
  await setup?.();
  const first = await observe(page, profile);
  const second = await observe(page, profile);
  assert.deepEqual(second, first, 'two observations of an unchanged page differ');
  const marks: number[] = [];
  for (const frame of page.frames()) {
    const found = await frame.evaluate(() => Array.from(document.querySelectorAll('[data-webrl-id]'), (e) => e.getAttribute('data-webrl-id')));
    marks.push(...found.map(Number));
  }
  assert.deepEqual(
    marks.sort((a, b) => a - b),
    first.elements.map((e) => e.id),
    'the DOM marks (in all frames) are the observation ids',
  );
  return first;
}

describe('observation of fixture pages', () => {
  test('form: labelled inputs, live values, hidden and password values stay out', async () => {
    const o = await observeFixture('form.html');
    assert.deepEqual(
      o.elements.map((e) => e.tag),
      ['input', 'input', 'input', 'textarea', 'input', 'button'],
    );
    assert.match(o.html, /<input id="0" value="a@b\.c" type="email" placeholder="you@example\.com" data-label="Email" data-bbox="\d+,\d+,\d+,\d+"> <\/input>/);
    assert.match(o.html, /<input id="1" title="Full name" type="text" data-label="Name" /);
    assert.match(o.html, /<input id="2" type="password" data-bbox=/, 'a password value is not printed');
    assert.doesNotMatch(o.html, /hunter2|abc/);
    assert.match(o.html, /<textarea id="3" value="Hello there" placeholder="About you"/);
    assert.match(o.html, /<button id="5" type="reset" data-bbox="[\d,]+"> Reset <\/button>/, 'a title equal to the text is dropped');
    assert.equal(o.elements[0]!.value, 'a@b.c');
    assert.equal(o.elements[0]!.attributes.placeholder, 'you@example.com');
    assert.equal(o.elements[2]!.attributes.value, 'hunter2', 'raw attributes are all kept for matching');
  });

  test('table: cells print as text, only links get ids', async () => {
    const o = await observeFixture('table.html');
    assert.deepEqual(texts(o), ['#1001', '#1002']);
    assert.match(o.html, /<th data-bbox="[\d,]+"> Order <\/th>/);
    assert.match(o.html, /<a id="0" data-bbox="[\d,]+"> #1001 <\/a> <td data-bbox="[\d,]+"> Jennifer White <\/td> <td data-bbox="[\d,]+"> \$59\.99 <\/td>/);
    assert.doesNotMatch(o.html, /<table|<tr|<tbody/, 'wrappers without content are dropped');
  });

  test('nested clickables: only the innermost keeps an id', async () => {
    const o = await observeFixture('nested.html');
    assert.deepEqual(texts(o), ['Shop now', 'Inner button', 'Lonely clickable div', 'Button in link', 'Menu link']);
    assert.deepEqual(
      o.elements.map((e) => e.tag),
      ['a', 'button', 'div', 'button', 'a'],
    );
    assert.equal(o.elements[0]!.text, '', 'the link has no direct text');
    assert.match(o.html, /<a id="0" [^>]*> <span [^>]*> Shop <\/span> <b [^>]*> now <\/b> <\/a>/);
    assert.match(o.html, /<div data-bbox="[\d,]+"> Outer <button id="1"/, 'the onclick wrapper loses its id');
  });

  test('hidden elements: display none, visibility, opacity, hidden attribute, zero size, closed details', async () => {
    const o = await observeFixture('hidden.html');
    assert.deepEqual(texts(o), ['Shown', 'More']);
    for (const gone of ['In display none', 'Visibility hidden', 'Transparent', 'Hidden attribute', 'Zero size', 'Inside closed details']) {
      assert.ok(!o.html.includes(gone), `${gone} is printed`);
    }
    assert.match(o.html, /<span data-bbox="[\d,]+"> Visible child of hidden <\/span>/);
    assert.match(o.html, /<details data-bbox="[\d,]+" data-status="collapsed"> <summary id="1"/);
  });

  test('off-screen elements: not printed until scrolled into the viewport', async () => {
    const o = await observeFixture('offscreen.html');
    assert.deepEqual(texts(o), ['Top button']);
    assert.doesNotMatch(o.html, /Far left|Below the fold/);
    await page.evaluate(() => window.scrollTo(0, 1300));
    const scrolled = await observe(page);
    assert.deepEqual(texts(scrolled), ['Below the fold']);
    assert.match(scrolled.html, /Text below the fold/);
    assert.ok(elementWithText(scrolled, 'Below the fold').bbox[1] < 720, 'boxes are viewport coordinates');
  });

  test('pointer cursor: the element introducing it is clickable, its children are not', async () => {
    const o = await observeFixture('pointer.html');
    assert.deepEqual(
      o.elements.map((e) => [e.tag, e.fullText]),
      [
        ['div', 'Card title Card body'],
        ['a', 'a link'],
        ['span', 'Pointer span'],
      ],
    );
    assert.match(o.html, /<div data-bbox="[\d,]+"> Plain div <\/div>/);
  });

  test('tabindex: zero or more is clickable, negative or empty is not', async () => {
    const o = await observeFixture('tabindex.html');
    assert.deepEqual(texts(o), ['Focusable zero', 'Focusable three']);
  });

  test('ARIA roles: interactive roles are clickable, states go to data-status', async () => {
    const o = await observeFixture('roles.html');
    assert.deepEqual(texts(o), ['Role button', 'Role link', 'Role tab', 'Role checkbox', 'Role radio', 'Role menuitem', 'Upper-case role']);
    assert.equal(elementWithText(o, 'Role tab').role, 'tab');
    assert.match(o.html, /Role tab[^<]*<\/div>/);
    assert.match(o.html, /data-status="selected"> Role tab/);
    assert.match(o.html, /data-status="checked"> Role checkbox/);
    assert.match(o.html, /data-status="not-checked"> Role radio/);
    assert.match(o.html, /<div data-bbox="[\d,]+"> Region <\/div>/, 'an aria-label equal to the text is dropped');
  });

  test('labels: aria-label, aria-labelledby, alt, data-testid and data-label', async () => {
    const o = await observeFixture('labels.html');
    assert.match(o.html, /<button id="0" data-label="Close dialog" data-bbox="[\d,]+"> <\/button>/);
    assert.match(o.html, /<input id="1" type="number" data-label="Quantity"/);
    assert.match(o.html, /<img data-label="Company logo"/);
    assert.match(o.html, /<a id="3" title="Open the settings page" data-bbox="[\d,]+"> Settings <\/a>/);
    assert.match(o.html, /<input id="4" type="text" data-testid="search-box" data-label="Search the catalog"/);
    assert.equal(o.elements[4]!.attributes['data-testid'], 'search-box');
  });

  test('selects: options, the selected one, optgroups and disabled state', async () => {
    const o = await observeFixture('selects.html');
    const [color, grouped, off] = o.elements;
    assert.equal(color?.selectedOption, 'Blue');
    assert.equal(color?.value, 'b');
    assert.deepEqual(color?.options, ['Red', 'Blue', 'Green']);
    assert.deepEqual(grouped?.options, ['Boots', 'Sandals', 'Cap']);
    assert.match(
      o.html,
      /<select id="0" data-value="Blue" data-label="Color" data-bbox="[\d,]+"> <option value="r"> Red <\/option> <option value="b" selected="true"> Blue <\/option> <option value="g"> Green <\/option> <\/select>/,
    );
    assert.match(o.html, /<select id="2" data-value="Unavailable" data-bbox="[\d,]+" data-status="disabled">/);
    assert.equal(off?.tag, 'select');
  });

  test('long text: text and attribute values are cut at 500 characters, whitespace collapsed', async () => {
    const o = await observeFixture('longtext.html');
    const paragraph = /<p data-bbox="[\d,]+"> (word[^<]*) <\/p>/.exec(o.html)?.[1] ?? '';
    assert.ok(paragraph.length <= 500 && paragraph.length > 490, `paragraph of ${paragraph.length} chars`);
    const title = /title="(x+)"/.exec(o.html)?.[1] ?? '';
    assert.equal(title.length, 500);
    assert.match(o.html, /> spaced out text </);
    assert.ok(!o.html.includes('\n'), 'the observation is one line');
  });

  test('iframes: same-origin content is inlined, a cross-origin frame is one clickable', async () => {
    const o = await observeFixture('iframes.html');
    assert.deepEqual(
      o.elements.map((e) => [e.tag, e.fullText]),
      [
        ['button', 'Before frames'],
        ['button', 'Inner button'],
        ['a', 'Srcdoc link'],
        ['iframe', ''],
        ['button', 'After frames'],
      ],
    );
    assert.match(o.html, /Inner text <\/span> <button id="1"/);
    assert.match(o.html, /Srcdoc text <\/p> <a id="2"/);
    const frame = o.elements[3]!;
    assert.match(frame.attributes.src ?? '', /^http:\/\/localhost:\d+\/frame-inner\.html$/);
    const inner = o.elements[1]!;
    const [left, top] = inner.bbox;
    assert.ok(left > 100 && top > 8, `inner box ${inner.bbox} is in top-viewport coordinates`);
  });

  test('checkboxes and radios: checked state, values, class names containing "button"', async () => {
    const o = await observeFixture('checkbox.html');
    assert.deepEqual(
      o.elements.map((e) => e.checked),
      [true, false, true, false, undefined, undefined, undefined],
    );
    assert.match(o.html, /<input id="0" type="checkbox" data-label="Newsletter" data-bbox="[\d,]+" data-status="checked">/);
    assert.match(o.html, /<input id="3" value="slow" type="radio" data-bbox="[\d,]+" data-status="not-checked">/);
    assert.deepEqual(texts(o).slice(4), ['Fancy', 'One', 'Two'], 'a "button" class wrapping buttons loses its id');
  });

  test('contentEditable: the editable root is clickable, its paragraphs are not', async () => {
    const o = await observeFixture('editable.html');
    assert.deepEqual(
      o.elements.map((e) => [e.tag, e.fullText]),
      [['div', 'Edit me Second paragraph']],
    );
    assert.match(o.html, /<div id="0" data-bbox="[\d,]+"> <p data-bbox="[\d,]+"> Edit me <\/p>/);
  });

  test('overlays: a covered element is printed but has no id', async () => {
    const o = await observeFixture('overlay.html');
    assert.deepEqual(texts(o), ['Accept']);
    assert.match(o.html, /<button data-bbox="[\d,]+"> Covered button <\/button>/);
  });

  test('overflow clipping: content clipped away is not printed, a half-clipped link is clickable', async () => {
    const o = await observeFixture('clipped.html');
    assert.deepEqual(texts(o), ['Inside the box', 'Half clipped link']);
    assert.doesNotMatch(o.html, /Clipped away/);
  });

  test('escaping and removed content: scripts, styles and comments are gone, text is escaped', async () => {
    const o = await observeFixture('escaping.html');
    assert.match(o.html, /<p data-bbox="[\d,]+"> 1 &lt; 2 &amp;&amp; 3 &gt; 2 <\/p>/);
    assert.match(o.html, /placeholder="Say &quot;hi&quot;"/);
    assert.doesNotMatch(o.html, /script text|color: red|a comment/);
    assert.match(o.html, /^<html data-bbox="0,0,1280,\d+"> <body data-bbox="[\d,]+"> .* <\/body> <\/html>$/);
    assert.equal(o.title, 'Escaping');
    assert.equal(o.url, `${server.url}/escaping.html`);
  });
});

describe('icons and pointer wrappers', () => {
  test('an element whose only content is an icon is named by its label, image file or icon class', async () => {
    const names = [
      ['0', 'cart'],
      ['1', 'shopping bag'],
      ['2', 'Close'],
      ['3', 'logo home'],
      ['4', 'trash can'],
      ['5', 'Search'],
      ['6', 'settings gear'],
    ];
    const o = await observeFixture('icons.html');
    for (const [id, name] of names) assert.match(o.html, new RegExp(`<\\w+ id="${id}" data-label="${name}" data-bbox=`), `element ${id} is ${name}`);
    assert.match(o.html, /<button id="7" data-bbox="[\d,]+"> Text <\/button>/, 'an element with text gets no icon name');
    assert.match(o.html, /<button id="8" data-bbox="[\d,]+"> <\/button>/, 'an icon without a name stays unnamed');
    const webrl = await observeFixture('icons.html', 'webrl');
    for (const [id, name] of names) assert.match(webrl.html, new RegExp(`<\\w+ id="${id}" title="${name}" data-bbox=`), `webrl: element ${id} is ${name}`);
    assert.match(webrl.html, /<i id="1" title="shopping bag"/, 'webrl: the id sinks to the icon itself, as the reference puts it');
  });

  test('a pointer wrapper around several boxes gives each box its id; around text or one box it keeps its own', async () => {
    const o = await observeFixture('wrappers.html');
    assert.deepEqual(
      o.elements.map((e) => [e.tag, e.fullText]),
      [
        ['div', 'Bold'],
        ['div', 'Italic'],
        ['div', 'Underline'],
        ['li', 'First item'],
        ['li', 'Second item'],
        ['div', 'Card title Card body'],
        ['div', 'Only one box'],
        ['a', 'Product title Product price'],
        ['div', 'Inner A'],
        ['div', 'Inner B'],
      ],
    );
    const webrl = await observeFixture('wrappers.html', 'webrl');
    assert.deepEqual(
      webrl.elements.map((e) => e.fullText),
      [
        'Bold',
        'Italic',
        'Underline',
        'First item',
        'Second item',
        'Card title',
        'Card body',
        'Only one box',
        'Product title',
        'Product price',
        'Inner A',
        'Inner B',
      ],
      'webrl: every innermost box under a pointer cursor, as the reference',
    );
  });
});

describe('the webrl profile', () => {
  test("attributes as the reference prints them: data-text kept, live values in data-value, the chosen option's data-status, no data-label of ours", async () => {
    const o = await observeFixture('selects.html', 'webrl', async () => {
      await page.selectOption('#color', 'g');
    });
    assert.match(o.html, /<label id="0" data-text="Color" data-bbox="[\d,]+"> Color <\/label>/, 'data-text equal to the text is printed');
    assert.match(
      o.html,
      /<select id="1" data-value="g" data-text="Green" data-bbox="[\d,]+"> <option value="r" data-text="Red"> Red <\/option> <option value="b" data-text="Blue"> Blue <\/option> <option value="g" data-text="Green" data-status="selected"> Green <\/option> <\/select>/,
    );
    assert.match(o.html, /<select id="2" data-value="Boots" data-bbox="[\d,]+"> <\/select>/, 'options inside an optgroup are not printed');
    const form = await observeFixture('form.html', 'webrl', async () => {
      await page.fill('#email', 'new@b.c');
      await page.fill('input[type=password]', 'typed secret');
    });
    assert.match(form.html, /<input id="1" value="a@b\.c" type="email" placeholder="you@example\.com" data-value="new@b\.c" data-bbox="[\d,]+"> <\/input>/);
    assert.match(form.html, /<label data-text="Name" data-bbox="[\d,]+"> Name <input id="2" title="Full name" type="text" data-bbox=/);
    assert.doesNotMatch(form.html, /data-label|hunter2|typed secret/, 'no label of ours; a password is never printed (a deliberate difference)');
    assert.equal(form.elements[0]?.tag, 'label', 'a label with a control is clickable');
  });

  test('text: the leading text is the content, text after a child shows in data-text only; nothing is escaped', async () => {
    const o = await observeFixture('escaping.html', 'webrl');
    assert.match(o.html, /<p data-text="1 < 2 && 3 > 2" data-bbox="[\d,]+"> 1 < 2 && 3 > 2 <\/p>/);
    assert.match(o.html, /placeholder="Say "hi""/);
    const nested = await observeFixture('nested.html', 'webrl');
    assert.match(nested.html, /<div data-text="Outer" data-bbox="[\d,]+"> Outer <button id="2" data-text="Inner button"/);
    assert.match(nested.html, /<a data-bbox="[\d,]+"> <span id="0" data-text="Shop" [^>]*> Shop <\/span> <b id="1" data-text="now" [^>]*> now <\/b> <\/a>/);
  });

  test('deliberate differences: what cannot be seen prints nothing, a half-visible element is clickable', async () => {
    const hidden = await observeFixture('hidden.html', 'webrl');
    for (const gone of ['In display none', 'Visibility hidden', 'Transparent', 'Inside closed details'])
      assert.ok(!hidden.html.includes(gone), `${gone} is printed`);
    assert.match(
      hidden.html,
      /<button data-text="Zero size" data-bbox="[\d,]+,0,0"> Zero size <\/button>/,
      'a box of no size in view prints, as in the reference',
    );
    const clipped = await observeFixture('clipped.html', 'webrl');
    assert.doesNotMatch(clipped.html, /Clipped away/);
    assert.deepEqual(texts(clipped), ['Inside the box', 'Half clipped link']);
  });
});

describe('renderSimplifiedHtml', () => {
  test('drops empty wrappers, keeps html and body, dedupes textual attributes, orders attributes', () => {
    const html = renderSimplifiedHtml({
      tag: 'html',
      structural: true,
      attrs: {},
      children: [
        {
          tag: 'div',
          attrs: { 'data-bbox': '0,0,10,10' },
          children: [
            { tag: 'button', id: 0, attrs: { 'data-status': 'disabled', title: 'Go', 'data-label': 'go', type: 'submit' }, children: ['Go'] },
            { tag: 'span', attrs: { title: 'Hint', 'data-label': 'Hint' }, children: [] },
          ],
        },
      ],
    });
    assert.equal(html, '<html> <button id="0" type="submit" data-status="disabled"> Go </button> <span title="Hint"> </span> </html>');
  });
});
