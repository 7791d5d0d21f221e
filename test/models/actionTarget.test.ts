/**
 * What the ORM reads of each action: its target as the page showed it (label, rank among twins, page,
 * value), carried in the outcome state, kept through the training-data schema, and visible in the ORM's
 * features and the remote ORM's prompt.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Observation } from '../../browser/contract';
import { describeTarget, targetText } from '../../models/actionTarget';
import { featurizeOutcomes } from '../../models/featurizer';
import { outcomeState } from '../../models/orm';
import { modelStateSchema, type ModelState } from '../../models/state';

const page = (url: string, html: string): Observation => ({ url, title: '', html, elements: [] });

const listing = (firstVote: string) =>
  page(
    'http://forum.test/f/books/new',
    `<html> <body> <a id="0"> New </a> <button id="1" title="Upvote" value="${firstVote}"> ▲ </button> <a id="2"> Klara and the Sun </a> ` +
      '<button id="3" title="Upvote" value="1"> ▲ </button> <a id="4"> Pachinko </a> <input id="5" type="text" placeholder="Title"> </input> </body> </html>',
  );

describe('action targets', () => {
  test('name the element by its text, else its title or placeholder, with its rank among twins', () => {
    const observation = listing('1');
    assert.deepEqual(describeTarget({ kind: 'Click', element: 3 }, observation), {
      tag: 'button',
      label: 'Upvote',
      nth: 2,
      of: 2,
      url: 'http://forum.test/f/books/new',
      value: '1',
    });
    assert.deepEqual(describeTarget({ kind: 'Click', element: 2 }, observation), {
      tag: 'a',
      label: 'Klara and the Sun',
      nth: 1,
      of: 1,
      url: 'http://forum.test/f/books/new',
    });
    assert.equal(describeTarget({ kind: 'Type', element: 5, argument: 'Hi' }, observation)?.label, 'Title');
    assert.equal(describeTarget({ kind: 'Click', element: 99 }, observation), undefined, 'an id the page lacks');
    assert.equal(describeTarget({ kind: 'Scroll Down' }, observation), undefined);
    assert.equal(describeTarget(null, observation), undefined);
    assert.equal(targetText(describeTarget({ kind: 'Click', element: 3 }, observation)!), '[button "Upvote" 2 of 2 on /f/books/new]');
  });

  test('the outcome state gives every element action its target on the page it was chosen on', () => {
    const rounds = [
      { state: { intent: 'Upvote the newest post in f/books', history: [], observation: listing('1') }, response: 'do(action="Click", element="1")' },
      { state: { intent: 'Upvote the newest post in f/books', history: [], observation: listing('0') }, response: 'exit(message="Done")' },
    ];
    const outcome = outcomeState('Upvote the newest post in f/books', rounds)!;
    assert.equal(outcome.observation, rounds[1]!.state.observation);
    assert.deepEqual(
      outcome.history.map((round) => [round.action?.kind, round.target?.label, round.target?.nth]),
      [
        ['Click', 'Upvote', 1],
        ['exit', undefined, undefined],
      ],
    );
    assert.equal(outcomeState('x', []), null);
    // Stored as training data and read back, the targets survive.
    assert.deepEqual(modelStateSchema.parse(JSON.parse(JSON.stringify(outcome))).history, outcome.history);
  });

  test("the ORM's row tells which twin was acted on and whether the page shows the effect", () => {
    const intent = 'Upvote the newest post in f/books';
    const outcome = (element: string, finalVote: string): ModelState =>
      outcomeState(intent, [
        { state: { intent, history: [], observation: listing('1') }, response: `do(action="Click", element="${element}")` },
        { state: { intent, history: [], observation: listing(finalVote) }, response: 'exit(message="Done")' },
      ])!;
    const row = (state: ModelState) =>
      Array.from(featurizeOutcomes([state]).indices)
        .filter((index) => index !== 0)
        .sort()
        .join(',');
    const firstCast = outcome('1', '0');
    assert.notEqual(row(firstCast), row(outcome('3', '0')), 'the first or the second Upvote');
    assert.notEqual(row(firstCast), row(outcome('1', '1')), 'the vote shows on the final page or not');
    const withoutTargets: ModelState = { ...firstCast, history: firstCast.history.map(({ response, action }) => ({ response, action })) };
    assert.notEqual(row(firstCast), row(withoutTargets));
  });
});
