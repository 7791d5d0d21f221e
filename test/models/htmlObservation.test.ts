/**
 * Observations rebuilt from the simplified HTML a trace keeps: the elements (ids, tags, text, printed
 * attributes, boxes, select options) and the title, so models read live pages and traces alike.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { canonicalObservation, observationFromHtml } from '../../models/htmlObservation';
import { render } from './fixtures/shop';

const HTML =
  '<html data-bbox="0,0,1280,720"> <body data-bbox="0,0,1280,720"> <h1 data-bbox="0,0,500,30"> Checkout </h1> ' +
  '<a id="0" data-bbox="962,4,67,15"> My Account <span> (2) </span> </a> <input id="13" type="text" placeholder="Search" data-bbox="8,63,254,31"> </input> ' +
  '<label> City </label> <input id="14" title="City" value="San Mateo" type="text" data-bbox="140,319,177,21"> </input> ' +
  '<select id="15" title="State" data-value="Ohio" data-bbox="140,346,138,19"> <option> Alabama </option> <option selected="true"> Ohio </option> </select> ' +
  '<button id="16" data-bbox="10,400,80,20"> Save &amp; close </button> <img src="x"> <p> Total: $3 </p> </body> </html>';

describe('observations from simplified HTML', () => {
  test('elements, attributes, boxes, options and the title', () => {
    const observation = observationFromHtml('http://shop.test/checkout/', HTML);
    assert.equal(observation.title, 'Checkout');
    assert.deepEqual(
      observation.elements.map((e) => [e.id, e.tag, e.text, e.fullText]),
      [
        [0, 'a', 'My Account', 'My Account (2)'],
        [13, 'input', '', ''],
        [14, 'input', '', ''],
        [15, 'select', '', ''],
        [16, 'button', 'Save & close', 'Save & close'],
      ],
    );
    const [, search, city, state] = observation.elements;
    assert.deepEqual(search!.attributes, { type: 'text', placeholder: 'Search' });
    assert.deepEqual(search!.bbox, [8, 63, 254, 31]);
    assert.equal(city!.value, 'San Mateo');
    assert.deepEqual([state!.options, state!.selectedOption], [['Alabama', 'Ohio'], 'Ohio']);
  });

  test('a rendered page gives back its elements; the rebuild is cached per observation', () => {
    const page = render({ kind: 'search', query: 'Blue' });
    const rebuilt = canonicalObservation(page);
    assert.deepEqual(
      rebuilt.elements.map((e) => [e.id, e.tag, e.text, e.bbox]),
      page.elements.map((e) => [e.id, e.tag, e.text, e.bbox]),
    );
    assert.equal(rebuilt.title, page.title);
    assert.equal(canonicalObservation(page), rebuilt);
  });

  test('unbalanced markup does not throw', () => {
    const observation = observationFromHtml('about:blank', '<div> <a id="1"> one <b> two </div> </i> <a id="2"> three');
    assert.deepEqual(
      observation.elements.map((e) => [e.id, e.fullText]),
      [
        [1, 'one two'],
        [2, 'three'],
      ],
    );
  });
});
