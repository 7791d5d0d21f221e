import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Action } from '../../browser/contract';
import { formatAction, parseAction, type ParseErrorCode } from '../../browser/grammar';
import { SeededRng } from '../../browser/rng';

type Expectation = Action | ParseErrorCode;

/** Realistic model outputs and what they must parse to (an action, or the error code). */
const TABLE: [string, Expectation][] = [
  ['do(action="Click", element="7")', { kind: 'Click', element: 7 }],
  ['# Element: the \'Sales\' menu item on the left sidebar\ndo(action="Click", element="2")', { kind: 'Click', element: 2 }],
  ['# Element: the \'Sales\' menu item, second from the top do(action="Click", element="2")', { kind: 'Click', element: 2 }],
  ['  do( action = "Click" ,  element = "12" )  ', { kind: 'Click', element: 12 }],
  ["do(action='Click', element='3')", { kind: 'Click', element: 3 }],
  ['do(action="Click", element=3)', { kind: 'Click', element: 3 }],
  ['do(element="3", action="Click")', { kind: 'Click', element: 3 }],
  ['do(action="Click", element=" 3 ")', { kind: 'Click', element: 3 }],
  ['do(action="click", element="5")', { kind: 'Click', element: 5 }],
  ['do(action="Hover", element="4")', { kind: 'Hover', element: 4 }],
  ['do(action="Type", argument="red shoes", element="13")', { kind: 'Type', element: 13, argument: 'red shoes' }],
  ["# Element: the search box\ndo(action='Type', argument='red shoes', element='13')", { kind: 'Type', element: 13, argument: 'red shoes' }],
  ['do(action="Type", argument="He said \\"hi\\"", element="1")', { kind: 'Type', element: 1, argument: 'He said "hi"' }],
  ["do(action='Type', argument='it\\'s fine', element='1')", { kind: 'Type', element: 1, argument: "it's fine" }],
  ['do(action="Type", argument="line1\\nline2", element="1")', { kind: 'Type', element: 1, argument: 'line1\nline2' }],
  ['do(action="Type", argument="", element="1")', { kind: 'Type', element: 1, argument: '' }],
  ['do(action="Search", argument="wireless mouse", element="9")', { kind: 'Search', element: 9, argument: 'wireless mouse' }],
  ['do(action="Select Dropdown Option", argument="Blue", element="9")', { kind: 'Select Dropdown Option', element: 9, argument: 'Blue' }],
  ['do(action="select  dropdown option", argument="Blue", element="9")', { kind: 'Select Dropdown Option', element: 9, argument: 'Blue' }],
  ['do(action="Scroll Down")', { kind: 'Scroll Down' }],
  ['do(action="Scroll Up")', { kind: 'Scroll Up' }],
  ['do(action="Press Enter")', { kind: 'Press Enter' }],
  ['do(action="Press Enter", element="13")', { kind: 'Press Enter' }],
  ['do(action="Go Backward")', { kind: 'Go Backward' }],
  ['do(action="Go Forward")', { kind: 'Go Forward' }],
  ['go_backward()', { kind: 'Go Backward' }],
  ['exit(message="The total is $59.99")', { kind: 'exit', message: 'The total is $59.99' }],
  ["# Element: none\nexit(message='Jennifer White')", { kind: 'exit', message: 'Jennifer White' }],
  ['exit(message="")', { kind: 'exit', message: '' }],
  ['exit(message="N/A")<|eot_id|>', { kind: 'exit', message: 'N/A' }],
  ['```python\ndo(action="Click", element="7")\n```', { kind: 'Click', element: 7 }],
  ['do(action="Click", element="7",)', { kind: 'Click', element: 7 }],
  ['exit(message="""multi\nline""")', { kind: 'exit', message: 'multi\nline' }],
  ['do(action="Type", argument="caf\\u00e9", element="2")', { kind: 'Type', element: 2, argument: 'café' }],
  ['do(action="Type", argument="C:\\path", element="2")', { kind: 'Type', element: 2, argument: 'C:\\path' }],
  ['', 'empty'],
  ['   \n ', 'empty'],
  ['I think I should click the search button.', 'no_action'],
  ['# Element: the search button', 'no_action'],
  ['click(element="7")', 'no_action'],
  ['undo(action="Click", element="7")', 'no_action'],
  ['do(action="Click")', 'missing_element'],
  ['do(action="Type", element="13")', 'missing_argument'],
  ['do(action="Search", argument="x")', 'missing_element'],
  ['do(element="7")', 'missing_action'],
  ['do(action="Right Click", element="7")', 'unknown_action'],
  ['do(action="Click", element="seven")', 'bad_element'],
  ['do(action="Click", element="-1")', 'bad_element'],
  ['do(action="Click", element="7.5")', 'bad_element'],
  ['do(action="Click", element="7"', 'bad_syntax'],
  ['do(action="Click" element="7")', 'bad_syntax'],
  ['do(action: "Click", element: "7")', 'bad_syntax'],
  ['do("Click", "7")', 'bad_syntax'],
  ['do(action="Click, element="7")', 'bad_quoting'],
  ['do(action="Type", argument="unterminated, element="7")', 'bad_quoting'],
  ['do(action=Click, element="7")', 'bad_quoting'],
  ['do(action="Type", argument="bad \\x4", element="7")', 'bad_quoting'],
  // As the reference (VAB-WebArena-Lite's webrl parser): an extra keyword is ignored, a trailing
  // comment is Python's, an exit after a do is the action taken, and so is the last of several do calls.
  ['do(action="Click", element="7", target="x")', { kind: 'Click', element: 7 }],
  ['do(action="Click", element="7")  # opens the cart', { kind: 'Click', element: 7 }],
  ['do(action="Click", element="7")\n# then type the name', { kind: 'Click', element: 7 }],
  ['exit(message="42", confidence="high")', { kind: 'exit', message: '42' }],
  ['exit(answer="42")', 'missing_argument'],
  ['exit()', 'missing_argument'],
  ['do(action="Click", action="Hover", element="7")', 'duplicate_keyword'],
  ['do(action="Click", element="7") then I will type', 'trailing_junk'],
  ['do(action="Click", element="7")\nThis opens the cart.', 'trailing_junk'],
  ['do(action="Click", element="7")\ndo(action="Click", element="8")', { kind: 'Click', element: 8 }],
  ['do(action="Type", argument="shoes", element="3") exit(message="done")', { kind: 'exit', message: 'done' }],
  ['exit(message="done")\ndo(action="Click", element="8")', 'multiple_actions'],
  ['go_backward(steps=2)', { kind: 'Go Backward' }],
];

describe('parseAction: realistic model outputs', () => {
  test('the table has at least 40 cases', () => assert.ok(TABLE.length >= 40));
  for (const [output, expected] of TABLE) {
    test(JSON.stringify(output).slice(0, 90), () => {
      const result = parseAction(output);
      if (typeof expected === 'string') {
        assert.equal(result.ok, false, `expected ${expected}, parsed ${JSON.stringify(result)}`);
        if (!result.ok) {
          assert.equal(result.error.code, expected, result.error.message);
          assert.ok(result.error.message.length > 0);
        }
      } else {
        assert.deepEqual(result, { ok: true, action: expected });
      }
    });
  }
});

const WORDS = ['red shoes', 'Blue', '', 'He said "hi"', "it's", 'back\\slash', 'tab\there', 'new\nline', 'café', '$59.99', '\u0001ctl'];

function randomAction(rng: SeededRng): Action {
  const element = Math.floor(rng.next() * 500);
  const argument = rng.pick(WORDS);
  switch (Math.floor(rng.next() * 11)) {
    case 0:
      return { kind: 'Click', element };
    case 1:
      return { kind: 'Hover', element };
    case 2:
      return { kind: 'Type', element, argument };
    case 3:
      return { kind: 'Search', element, argument };
    case 4:
      return { kind: 'Select Dropdown Option', element, argument };
    case 5:
      return { kind: 'Scroll Up' };
    case 6:
      return { kind: 'Scroll Down' };
    case 7:
      return { kind: 'Press Enter' };
    case 8:
      return { kind: 'Go Backward' };
    case 9:
      return { kind: 'Go Forward' };
    default:
      return { kind: 'exit', message: argument };
  }
}

const ALPHABET = 'do(exit)go_backward="\',\\ #\n\tactionelementargumentmessage0123456789ClickTypeScroll Down<|eot_id|>```';

/** Mutates a string: deletions, insertions, duplications and truncations drawn from grammar-ish pieces. */
function mutate(rng: SeededRng, text: string): string {
  let out = text;
  const edits = 1 + Math.floor(rng.next() * 4);
  for (let i = 0; i < edits; i++) {
    const at = Math.floor(rng.next() * (out.length + 1));
    switch (Math.floor(rng.next() * 5)) {
      case 0:
        out = out.slice(0, at) + out.slice(at + 1 + Math.floor(rng.next() * 3));
        break;
      case 1:
        out = out.slice(0, at) + ALPHABET[Math.floor(rng.next() * ALPHABET.length)] + out.slice(at);
        break;
      case 2:
        out = out.slice(0, at) + out.slice(at, at + Math.floor(rng.next() * 10)) + out.slice(at);
        break;
      case 3:
        out = out.slice(0, at);
        break;
      default:
        out = out.slice(0, at) + String.fromCharCode(Math.floor(rng.next() * 0x3000)) + out.slice(at);
    }
  }
  return out;
}

describe('parseAction: fuzz', () => {
  test('formatAction round-trips through parseAction', () => {
    const rng = new SeededRng(7);
    for (let i = 0; i < 3000; i++) {
      const action = randomAction(rng);
      assert.deepEqual(parseAction(formatAction(action)), { ok: true, action });
      assert.deepEqual(parseAction(`# Element: something\n${formatAction(action)}\n`), { ok: true, action });
    }
  });

  test('12,000 random and mutated strings never throw and always give a well-formed result', () => {
    const rng = new SeededRng(20241102);
    const seeds = [...TABLE.map(([output]) => output), ...Array.from({ length: 50 }, () => formatAction(randomAction(rng)))];
    for (let i = 0; i < 12_000; i++) {
      const input =
        i % 3 === 0
          ? Array.from({ length: Math.floor(rng.next() * 80) }, () => ALPHABET[Math.floor(rng.next() * ALPHABET.length)]).join('')
          : mutate(rng, rng.pick(seeds));
      const result = parseAction(input);
      if (result.ok) assert.equal(typeof result.action.kind, 'string');
      else assert.ok(result.error.code && result.error.message, `bad error for ${JSON.stringify(input)}`);
    }
  });
});
