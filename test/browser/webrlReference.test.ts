/**
 * The `webrl` observation profile against the reference annotator (docs/webrl-fidelity.md): each page of
 * fixtures/webrl-reference/pages.ts (embedded site pages and form widgets, after typing, choosing and
 * ticking) is observed and compared, element by element and attribute by attribute, with what the
 * reference printed for the same page (fixtures/webrl-reference/expected.json, written by derive.ts from
 * THUDM/VisualAgentBench's annotator). The boxes are compared too: the expected file was derived with this
 * Chromium and its fonts; after a Chromium or font change that moves boxes, derive it again.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { observe, VIEWPORT } from '../../browser/observe';
import { serveDirectory, type StaticServer } from '../../browser/staticServer';
import { startEmbeddedSites, type EmbeddedSites } from '../../env/embeddedSites';
import { openReferencePage, REFERENCE_PAGES, REFERENCE_WORLD_SEED } from './fixtures/webrl-reference/pages';
import { launchChromium, PAGES_DIR } from './helpers';

interface Expected {
  reference: string;
  worldSeed: number;
  viewport: { width: number; height: number };
  pages: Record<string, string>;
}

const expected = JSON.parse(readFileSync(new URL('./fixtures/webrl-reference/expected.json', import.meta.url), 'utf8')) as Expected;

/** One printed element: its tag, its id, its attributes in print order, its text, and how deep it sits. */
interface PrintedElement {
  tag: string;
  depth: number;
  attributes: [string, string][];
  text: string;
}

/** The printed attribute names; nothing is escaped, so a value ends at a quote followed by one of them or by `>`. */
const NAMES = '(?:id|title|value|type|placeholder|selected|data-value|data-text|data-testid|data-label|data-bbox|data-status)';
const ATTRIBUTE = ` (${NAMES})="(.*?)"(?= ${NAMES}="|>)`;
const TOKEN = new RegExp(`</([\\w-]+)>|<([\\w-]+)((?: ${NAMES}=".*?"(?= ${NAMES}="|>))*)>|([^<]+|<)`, 'g');

/** Reads the one-line observation back into its elements in document order. */
function printedElements(html: string): PrintedElement[] {
  const elements: PrintedElement[] = [];
  const open: PrintedElement[] = [];
  for (const match of html.matchAll(TOKEN)) {
    const [, closing, tag, attributes, text] = match;
    if (closing !== undefined) {
      assert.equal(open.pop()?.tag, closing, `unbalanced </${closing}> in ${html.slice(0, 200)}`);
    } else if (tag !== undefined) {
      const element: PrintedElement = {
        tag,
        depth: open.length,
        attributes: Array.from((attributes ?? '').matchAll(new RegExp(ATTRIBUTE, 'g')), (a) => [a[1]!, a[2]!]),
        text: '',
      };
      elements.push(element);
      open.push(element);
    } else if (text?.trim()) {
      const parent = open.at(-1);
      if (parent) parent.text = [parent.text, text.trim()].filter(Boolean).join(' ');
    }
  }
  assert.equal(open.length, 0, 'every element is closed');
  return elements;
}

function describeElement(element: PrintedElement): string {
  const id = element.attributes.find(([name]) => name === 'id');
  return `<${element.tag}${id ? ` id="${id[1]}"` : ''}>`;
}

/** Every difference between two printed pages, attribute by attribute (the first 20). */
function differences(want: PrintedElement[], got: PrintedElement[]): string[] {
  const found: string[] = [];
  for (let i = 0; i < Math.max(want.length, got.length) && found.length < 20; i++) {
    const w = want[i];
    const g = got[i];
    if (!w || !g) {
      found.push(`element ${i}: expected ${w ? describeElement(w) : 'nothing'}, got ${g ? describeElement(g) : 'nothing'}`);
      break;
    }
    const at = `element ${i} ${describeElement(w)}`;
    if (w.tag !== g.tag || w.depth !== g.depth) {
      found.push(`${at}: expected <${w.tag}> at depth ${w.depth}, got <${g.tag}> at depth ${g.depth}`);
      break;
    }
    const names = new Set([...w.attributes, ...g.attributes].map(([name]) => name));
    for (const name of names) {
      const wv = w.attributes.find(([n]) => n === name)?.[1];
      const gv = g.attributes.find(([n]) => n === name)?.[1];
      if (wv !== gv) found.push(`${at}: ${name} expected ${JSON.stringify(wv)}, got ${JSON.stringify(gv)}`);
    }
    const order = (e: PrintedElement) => e.attributes.map(([name]) => name).join(' ');
    if (order(w) !== order(g) && names.size === w.attributes.length && names.size === g.attributes.length) {
      found.push(`${at}: attribute order expected ${order(w)}, got ${order(g)}`);
    }
    if (w.text !== g.text) found.push(`${at}: text expected ${JSON.stringify(w.text)}, got ${JSON.stringify(g.text)}`);
  }
  return found;
}

let browser: Browser;
let sites: EmbeddedSites;
let fixtures: StaticServer;

before(async () => {
  [browser, sites, fixtures] = await Promise.all([launchChromium(), startEmbeddedSites({ seed: REFERENCE_WORLD_SEED }), serveDirectory(PAGES_DIR)]);
});

after(async () => {
  await browser.close();
  await fixtures.close();
  await sites.stop();
});

describe('the webrl profile prints what the reference annotator prints', () => {
  test('the expected file covers exactly these pages, at this viewport and world', () => {
    assert.deepEqual(
      Object.keys(expected.pages),
      REFERENCE_PAGES.map((page) => page.name),
    );
    assert.deepEqual(expected.viewport, VIEWPORT);
    assert.equal(expected.worldSeed, REFERENCE_WORLD_SEED);
  });

  for (const spec of REFERENCE_PAGES) {
    test(spec.name, async () => {
      const page = await openReferencePage(browser, { ...sites.urls, fixtures: fixtures.url }, spec);
      const { html } = await observe(page, 'webrl');
      await page.context().close();
      const want = printedElements(expected.pages[spec.name]!);
      const got = printedElements(html);
      assert.ok(
        want.some((e) => e.attributes.some(([name]) => name === 'id')),
        'the page has elements with ids',
      );
      assert.deepEqual(differences(want, got), [], `${spec.name} differs from the reference`);
      assert.equal(html, expected.pages[spec.name], 'the same one-line text');
    });
  }
});
