/**
 * The featurizer and the candidate generator: fixed hashing (a changed hash must bump the version),
 * fixed-width padded rows, determinism, and the candidate actions a state offers.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Observation } from '../../browser/contract';
import { buildCandidates, CANDIDATE_LIMITS } from '../../models/candidates';
import {
  ACTOR_ROW_WIDTH,
  FEATURE_DIM,
  FEATURIZER_VERSION,
  STATE_ROW_WIDTH,
  featureIndex,
  featurizeCandidates,
  featurizeOutcomes,
  featurizeStates,
} from '../../models/featurizer';
import type { ModelState } from '../../models/state';
import { intentLists, intentPhrases, pageSegments, pageTextSegments, quotedSpans } from '../../models/text';
import { render } from './fixtures/shop';

const formPage: Observation = {
  url: 'http://shop.test/account/address?tab=edit',
  title: 'Edit address',
  html:
    '<html> <body> <input id="0" type="text" placeholder="Street" data-bbox="10,40,300,30"> </input> <select id="1" data-bbox="10,90,300,30"> Country <option> Canada </option> <option> France </option> <option> </option> </select> ' +
    '<p> Total: </p> <p> $1,204.50 </p> <button id="2" data-bbox="10,140,100,30"> Save &amp; close </button> </body> </html>',
  elements: [
    { id: 0, tag: 'input', text: '', attributes: { type: 'text', placeholder: 'Street' }, bbox: [10, 40, 300, 30] },
    { id: 1, tag: 'select', text: 'Country', attributes: {}, bbox: [10, 90, 300, 30], options: ['Canada', 'France', ''] },
    { id: 2, tag: 'button', text: 'Save & close', attributes: {}, bbox: [10, 140, 100, 30] },
  ],
};

const state = (intent: string, observation: Observation = formPage): ModelState => ({ intent, history: [], observation });

/** The feature indices of the candidate row whose action is `key`, for each key asked. */
function candidateRows(s: ModelState): (key: string) => Int32Array {
  const candidates = buildCandidates(s.intent, s.observation);
  const rows = featurizeCandidates(s, candidates);
  return (key) => {
    const r = candidates.findIndex((c) => c.key === key);
    assert.ok(r >= 0, `no candidate ${key}`);
    return rows.indices.subarray(r * rows.width, (r + 1) * rows.width);
  };
}

describe('hashing', () => {
  test('is fixed: these indices only change with a new FEATURIZER_VERSION', () => {
    assert.equal(FEATURIZER_VERSION, 'webrl-hashed-features/10');
    assert.equal(FEATURE_DIM, 2 ** 18);
    assert.deepEqual(['k|Click', 'it|price', 'b'].map(featureIndex), [125600, 236189, 33508]);
  });

  test('never uses the padding index 0 and stays below the dimension', () => {
    for (let i = 0; i < 20_000; i++) {
      const index = featureIndex(`feature-${i}`);
      assert.ok(index >= 1 && index < FEATURE_DIM);
    }
  });
});

describe('rows', () => {
  test('are [n, width], padded with (0, 0), identical for identical input', () => {
    const s = state('Change the country to "France" and save');
    const candidates = buildCandidates(s.intent, s.observation);
    const a = featurizeCandidates(s, candidates);
    const b = featurizeCandidates(structuredClone(s), buildCandidates(s.intent, s.observation));
    assert.deepEqual([a.rows, a.width, a.indices.length], [candidates.length, ACTOR_ROW_WIDTH, candidates.length * ACTOR_ROW_WIDTH]);
    assert.deepEqual(a.indices, b.indices);
    assert.deepEqual(a.values, b.values);
    for (let r = 0; r < a.rows; r++) {
      const row = Array.from(a.indices.subarray(r * a.width, (r + 1) * a.width));
      const used = row.findIndex((index) => index === 0);
      if (used >= 0) assert.ok(row.slice(used).every((index, k) => index === 0 && a.values[r * a.width + used + k] === 0));
      assert.equal(new Set(row.filter((index) => index !== 0)).size, row.filter((index) => index !== 0).length, 'no index twice in a row');
    }
    const states = featurizeStates([s, s]);
    const outcomes = featurizeOutcomes([s]);
    assert.deepEqual([states.width, outcomes.width], [STATE_ROW_WIDTH, STATE_ROW_WIDTH]);
    assert.deepEqual(states.indices.subarray(0, STATE_ROW_WIDTH), states.indices.subarray(STATE_ROW_WIDTH));
  });

  test('candidates of one state differ in their features; history changes the state row', () => {
    const s = state('What is the total?');
    const rowIn = candidateRows(s);
    const rowOf = (key: string) => Array.from(rowIn(key)).join(',');
    const keys = [
      'do(action="Click", element="0")',
      'do(action="Click", element="2")',
      'do(action="Hover", element="2")',
      'exit(message="")',
      'exit(message="$1,204.50")',
      'do(action="Scroll Down")',
    ];
    assert.equal(new Set(keys.map(rowOf)).size, keys.length);
    const later: ModelState = { ...s, history: [{ response: 'do(action="Scroll Down")', action: { kind: 'Scroll Down' } }] };
    assert.notDeepEqual(featurizeStates([s]).indices, featurizeStates([later]).indices);
  });

  test('an argument row names the lower-case intent words around it, never quoted or capitalised ones', () => {
    const s = state('Open the first issue "Fix the settings page" in the photo-sorter project, then the Acme headphones');
    const rowIn = candidateRows(s);
    const featuresOf = (key: string) => new Set(rowIn(key));
    const project = featuresOf('do(action="Search", argument="photo-sorter", element="0")');
    assert.ok(project.has(featureIndex('anl|Search|project')));
    const settings = featuresOf('do(action="Search", argument="settings", element="0")');
    assert.ok(!settings.has(featureIndex('anl|Search|page')), 'a word inside the quotes is content, not phrasing');
    const headphones = featuresOf('do(action="Search", argument="headphones", element="0")');
    assert.ok(headphones.has(featureIndex('ap|Search|word')) && !headphones.has(featureIndex('apl|Search|acme')), 'capitalised words are names');
  });

  test("the task type is the intent's phrasing, without its slot values", () => {
    const typeFeatures = (intent: string) => {
      const row = featurizeStates([state(intent)]);
      return (word: string) => Array.from(row.indices).includes(featureIndex(`it|${word}`));
    };
    const search = typeFeatures('Search for "racing wheel"');
    assert.ok(search('search') && !search('rac') && !search('wheel'), 'quoted values are content');
    const stars = typeFeatures('How many stars does the budget-tracker project have?');
    assert.ok(stars('many') && stars('star') && stars('project') && !stars('budget-tracker'), 'identifiers are names');
    const subscribe = typeFeatures('Subscribe to f/movies');
    assert.ok(subscribe('subscribe') && !subscribe('f') && !subscribe('movy'));
    const price = typeFeatures('Change the price of Acme Headphones to $42.00');
    assert.ok(price('change') && price('price') && !price('42.00'), 'numbers are values');
  });

  test('a select option row crosses the task type with the option words the intent lacks', () => {
    const rowIn = candidateRows(state('Change the country of the shipping address to France'));
    const canada = new Set(rowIn('do(action="Select Dropdown Option", argument="Canada", element="1")'));
    assert.ok(canada.has(featureIndex('aot|country|canada')));
    const france = new Set(rowIn('do(action="Select Dropdown Option", argument="France", element="1")'));
    assert.ok(!france.has(featureIndex('aot|country|france')), 'an option the intent names is content, not vocabulary');
  });

  test("the ORM row ignores the final page's own words; the critic's state row reads them", () => {
    const s = state('Change the country to "France" and save');
    const reworded: ModelState = {
      ...s,
      observation: { ...formPage, url: 'http://shop.test/account/address?tab=billing', html: formPage.html.replace('Total:', 'Subtotal:') },
    };
    assert.deepEqual(featurizeOutcomes([reworded]).indices, featurizeOutcomes([s]).indices);
    assert.notDeepEqual(featurizeStates([reworded]).indices, featurizeStates([s]).indices);
  });

  test("the ORM row reads the intent's named things and a confirmation notice on the final page", () => {
    const finalPage = (title: string, notice = ''): Observation => ({
      url: `http://shop.test/${title.toLowerCase().replace(/\W+/g, '-')}.html`,
      title,
      html: `<html> <body> <h1> ${title} </h1> ${notice ? `<div> ${notice} </div>` : ''} <p> 12 items </p> </body> </html>`,
      elements: [],
    });
    const outcome = (observation: Observation) => {
      const s: ModelState = { intent: 'Show me the products in the Oral Care category', history: [], observation };
      return new Set(featurizeOutcomes([s]).indices);
    };
    const asked = outcome(finalPage('Oral Care'));
    const elsewhere = outcome(finalPage('Cycling'));
    assert.ok(asked.has(featureIndex('oen|4')) && asked.has(featureIndex('oet|4')));
    assert.ok(elsewhere.has(featureIndex('oen|0')) && elsewhere.has(featureIndex('oet|0')));
    assert.ok(asked.has(featureIndex('ott|3')) && elsewhere.has(featureIndex('ott|0')));
    assert.ok(asked.has(featureIndex('onote|0')));
    const saved = outcome(finalPage('Oral Care', 'You saved the address.'));
    assert.ok(saved.has(featureIndex('onote|1')) && saved.has(featureIndex('onotet|1|0|none')));
    assert.ok(outcome(finalPage('Oral Care', 'Profile was successfully updated')).has(featureIndex('onote|1')));
    assert.ok(outcome(finalPage('Oral Care', 'Saved addresses')).has(featureIndex('onote|0')), 'a heading with the word is no notice');
  });

  test('an ORM row without the task type is the row less its type-crossed features, whatever the type', () => {
    const finished = (intent: string): ModelState => ({
      intent,
      history: [
        {
          response: 'do(action="Select Dropdown Option", argument="France", element="1")',
          action: { kind: 'Select Dropdown Option', element: 1, argument: 'France' },
        },
      ],
      observation: formPage,
    });
    const features = (s: ModelState, withoutTaskType: boolean) => {
      const row = featurizeOutcomes([s], { withoutTaskType });
      return new Map(Array.from(row.indices, (index, i) => [index, row.values[i]!] as const).filter(([index]) => index !== 0));
    };
    const change = finished('Change the country to "France"');
    const blind = features(change, true);
    const full = features(change, false);
    assert.ok(full.has(featureIndex('it|country')) && full.has(featureIndex('cgs|change country|account|1')));
    assert.ok(!blind.has(featureIndex('it|country')) && !blind.has(featureIndex('cgs|change country|account|1')));
    for (const [index, value] of blind) assert.equal(full.get(index), value, 'every feature of the blind row is in the full row');
    assert.ok(blind.size >= full.size / 2, 'the generic evidence stays');
    assert.deepEqual(features(finished('Set the shipping country to "France"'), true), blind);
  });
});

describe('candidates', () => {
  test('offer clicks, typed intent phrases, options, page actions and exit answers from the page', () => {
    const keys = buildCandidates('Change the country to "France" and set the street to 12 Rue Cler', formPage).map((c) => c.key);
    for (const expected of [
      'do(action="Click", element="2")',
      'do(action="Hover", element="1")',
      'do(action="Type", argument="France", element="0")',
      'do(action="Search", argument="12 Rue Cler", element="0")',
      'do(action="Select Dropdown Option", argument="France", element="1")',
      'do(action="Scroll Down")',
      'do(action="Go Backward")',
      'exit(message="")',
      'exit(message="$1,204.50")',
      'exit(message="Save & close")',
    ]) {
      assert.ok(keys.includes(expected), `missing ${expected}`);
    }
    assert.ok(!keys.some((key) => key.includes('action="Type"') && key.includes('element="2"')), 'buttons are not typed into');
    assert.ok(!keys.includes('do(action="Select Dropdown Option", argument="", element="1")'));
    assert.equal(new Set(keys).size, keys.length);
  });

  test('the shop product page offers its price as an answer', () => {
    const page = render({ kind: 'product', slug: 'blue-kettle', added: false });
    const candidates = buildCandidates('What is the price of "Blue Kettle"?', page);
    const price = candidates.find((c) => c.action.kind === 'exit' && /^\$\d/.test(c.action.message));
    assert.equal(price?.label, 'Price');
  });

  test("a textarea takes a comma list one item per line; a date field takes the intent's dates in its format", () => {
    const page: Observation = {
      url: 'http://admin.test/reports/sales',
      title: 'Report',
      html: '<html> <body> <input id="0" type="text" placeholder="M/D/YY"> </input> <textarea id="1"> </textarea> <input id="2" type="text" placeholder="Name"> </input> </body> </html>',
      elements: [
        { id: 0, tag: 'input', text: '', attributes: { type: 'text', placeholder: 'M/D/YY' }, bbox: [0, 0, 100, 20] },
        { id: 1, tag: 'textarea', text: '', attributes: {}, bbox: [0, 30, 100, 60] },
        { id: 2, tag: 'input', text: '', attributes: { type: 'text', placeholder: 'Name' }, bbox: [0, 100, 100, 20] },
      ],
    };
    const candidates = buildCandidates('Create a forum named "Hiking, Camping" for May 2023 with a sidebar listing Packs, Shelters, Trips', page);
    const typed = (element: number) => candidates.filter((c) => c.action.kind === 'Type' && c.action.element === element);
    const lines = typed(1).flatMap((c) => (c.source === 'lines' && 'argument' in c.action ? [c.action.argument] : []));
    assert.ok(lines.includes('Packs\nShelters\nTrips'), 'the list, one item per line');
    assert.ok(!lines.some((text) => text.includes('Hiking')), 'quoted text stays as written');
    assert.ok(
      !typed(0)
        .concat(typed(2))
        .some((c) => c.source === 'lines'),
      'only a textarea takes lines',
    );
    const dates = typed(0).filter((c) => c.source === 'month-start' || c.source === 'month-end');
    assert.deepEqual(
      dates.map((c) => [c.source, 'argument' in c.action && c.action.argument]),
      [
        ['month-start', '5/1/23'],
        ['month-end', '5/31/23'],
      ],
    );
    assert.ok(!typed(2).some((c) => c.source.startsWith('month')), 'a field without a date format gets no dates');
  });

  test('an answer in a table cell is labelled with its column header', () => {
    const cell = (x: number, w: number, tag: string, text: string) => `<${tag} data-bbox="${x},100,${w},20"> ${text} </${tag}>`;
    const html = `<html> <body> <p> Orders </p> ${cell(0, 80, 'th', 'Total')}${cell(80, 60, 'th', 'Status')} ${cell(0, 80, 'td', '$12.00')}${cell(80, 60, 'td', '<span> Complete </span>')} </body> </html>`;
    assert.deepEqual(pageSegments(html), [
      { text: 'Orders' },
      { text: 'Total' },
      { text: 'Status' },
      { text: '$12.00', column: 'Total' },
      { text: 'Complete', column: 'Status' },
    ]);
    const candidates = buildCandidates('What is the status of my last order?', { url: 'http://admin.test/orders', title: 'Orders', html, elements: [] });
    const label = (message: string) => candidates.find((c) => c.action.kind === 'exit' && c.action.message === message)?.label;
    assert.equal(label('Complete'), 'Status', 'not the cell before it');
    assert.equal(label('$12.00'), 'Total');
    assert.equal(label('Total'), 'Orders', 'outside a body cell, the segment before');
    const cells = candidates.filter((c) => c.cell).map((c) => c.action.kind === 'exit' && c.action.message);
    assert.deepEqual(cells, ['$12.00', 'Complete']);
    const page: Observation = {
      url: 'http://admin.test/orders',
      title: 'Orders',
      html,
      elements: [{ id: 0, tag: 'input', text: '', attributes: {}, bbox: [0, 0, 10, 10] }],
    };
    const rowIn = candidateRows(state('What is the status of my last order?', page));
    assert.ok(rowIn('exit(message="Complete")').includes(featureIndex('xw|cell')));
    assert.ok(rowIn('exit(message="")').includes(featureIndex('xw|text')), 'an empty answer is no element text');
  });

  test('intent phrases and page text', () => {
    assert.deepEqual(quotedSpans(`Find "red shoes" and 'blue hats' but not customer's`), ['red shoes', 'blue hats']);
    const phrases = intentPhrases('Search for wireless headphones under $50', { maxNgram: 3, maxPhraseWords: 8, limit: 40 }).map((p) => p.text);
    assert.equal(phrases[0], 'wireless headphones under $50');
    assert.ok(phrases.includes('wireless headphones'));
    assert.ok(!phrases.includes('for wireless'), 'n-grams never start with a stop word');
    const price = intentPhrases('Change the price of Blue Kettle to $35.00', { maxNgram: 3, maxPhraseWords: 8, limit: 40 }).map((p) => p.text);
    assert.ok(price.includes('35.00') && !price.includes('$35.00'), 'a price field takes the number');
    assert.ok(
      intentPhrases('a b c d e f g h i j k l m n o p q r s t u v w x y z', { maxNgram: 5, maxPhraseWords: 8, limit: CANDIDATE_LIMITS.maxArguments }).length <=
        CANDIDATE_LIMITS.maxArguments,
    );
    assert.deepEqual(pageTextSegments('<p> Total: </p> <b>$3 &amp; 4&#39;s</b>'), ['Total:', "$3 & 4's"]);
    assert.deepEqual(intentLists('Tag it red, dark green and blue. Then stop'), [['red', 'dark green', 'blue']]);
    assert.deepEqual(intentLists('Hello, I would like a refund'), [], 'a clause is no list item');
  });
});
