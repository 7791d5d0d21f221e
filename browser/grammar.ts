/**
 * The WebRL action grammar (webrl.md §3): Python-call syntax, one call per reply. `parseAction` never
 * throws: it returns the action or a typed error. As the reference harness (VAB-WebArena-Lite) reads a
 * reply: the call taken is the last `exit(...)` when there is one, else the last `do(...)`, and text
 * before it (`# Element: ...` comments, earlier calls) is ignored; keyword arguments an action does not
 * use are ignored. After the call only whitespace, `# comments`, code fences and end-of-turn tokens may
 * follow.
 */
import type { Action } from './contract';

export type ParseErrorCode =
  | 'empty'
  | 'no_action'
  | 'bad_syntax'
  | 'bad_quoting'
  | 'duplicate_keyword'
  | 'missing_action'
  | 'unknown_action'
  | 'missing_element'
  | 'bad_element'
  | 'missing_argument'
  | 'trailing_junk'
  | 'multiple_actions';

export interface ParseError {
  code: ParseErrorCode;
  message: string;
}

export type ParseResult = { ok: true; action: Action } | { ok: false; error: ParseError };

type ActionKind = Action['kind'];
type ElementKind = 'Click' | 'Hover';
type ArgumentKind = 'Type' | 'Search' | 'Select Dropdown Option';
type PlainKind = 'Scroll Up' | 'Scroll Down' | 'Press Enter' | 'Go Backward' | 'Go Forward';

const ELEMENT_KINDS: readonly ElementKind[] = ['Click', 'Hover'];
const ARGUMENT_KINDS: readonly ArgumentKind[] = ['Type', 'Search', 'Select Dropdown Option'];
const PLAIN_KINDS: readonly PlainKind[] = ['Scroll Up', 'Scroll Down', 'Press Enter', 'Go Backward', 'Go Forward'];

/** Action names compared case- and spacing-insensitively ("scroll  down" is "Scroll Down"). */
const KIND_BY_NAME = new Map<string, Exclude<ActionKind, 'exit'>>(
  [...ELEMENT_KINDS, ...ARGUMENT_KINDS, ...PLAIN_KINDS].map((kind) => [kind.toLowerCase(), kind]),
);

/** Call names: `do(...)`, `exit(...)`, and the bare `go_backward()` / `go_forward()` forms. */
const CALL_START = /(?<![\w.])(do|exit|go_backward|go_forward)\s*\(/g;
const HAS_CALL = new RegExp(CALL_START.source);
/** What may follow the call: code fences and end-of-turn tokens the model or server left in, Python comments. */
const ALLOWED_TAIL = /```|<\|eot_id\|>|<\|end_of_text\|>|<\/s>|#[^\n]*/g;

type Literal = { kind: 'string'; value: string } | { kind: 'integer'; value: string };

class Failure {
  constructor(readonly error: ParseError) {}
}

function fail(code: ParseErrorCode, message: string): Failure {
  return new Failure({ code, message });
}

const SIMPLE_ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', '\\': '\\', "'": "'", '"': '"', '0': '\0' };

/** Reads the keyword arguments of a call, starting just after `(`; returns them and the index after `)`. */
function readArguments(text: string, start: number): { args: Map<string, Literal>; end: number } {
  const args = new Map<string, Literal>();
  let i = start;
  const skipSpace = () => {
    while (i < text.length && /\s/.test(text[i]!)) i++;
  };
  for (;;) {
    skipSpace();
    if (i >= text.length) throw fail('bad_syntax', 'the call is not closed with ")"');
    if (text[i] === ')') return { args, end: i + 1 };
    const name = /^[A-Za-z_]\w*/.exec(text.slice(i))?.[0];
    if (!name) throw fail('bad_syntax', `expected a keyword argument at offset ${i}, found ${JSON.stringify(text.slice(i, i + 12))}`);
    i += name.length;
    skipSpace();
    if (text[i] !== '=') throw fail('bad_syntax', `expected "=" after ${name}`);
    i++;
    skipSpace();
    const literal = readLiteral();
    if (args.has(name)) throw fail('duplicate_keyword', `${name} is given twice`);
    args.set(name, literal);
    skipSpace();
    if (text[i] === ',') i++;
    else if (text[i] !== ')') {
      if (i >= text.length) throw fail('bad_syntax', 'the call is not closed with ")"');
      // `a="x" b="y"` lacks a comma; anything else glued to a closing quote means a quote inside the
      // string was not escaped.
      if (literal.kind === 'string' && !/^[A-Za-z_]\w*\s*=/.test(text.slice(i))) {
        throw fail('bad_quoting', `text follows the closing quote of ${name}: an unescaped quote inside the string?`);
      }
      throw fail('bad_syntax', `expected "," or ")" after the value of ${name}`);
    }
  }

  function readLiteral(): Literal {
    const digits = /^-?\d+/.exec(text.slice(i))?.[0];
    if (digits) {
      i += digits.length;
      return { kind: 'integer', value: digits };
    }
    const quote = text[i];
    if (quote !== '"' && quote !== "'") {
      throw fail('bad_quoting', `expected a quoted string at offset ${i}, found ${JSON.stringify(text.slice(i, i + 12))}`);
    }
    const delimiter = text.startsWith(quote.repeat(3), i) ? quote.repeat(3) : quote;
    i += delimiter.length;
    let value = '';
    for (;;) {
      if (i >= text.length) throw fail('bad_quoting', 'a string is not closed');
      if (text.startsWith(delimiter, i)) {
        i += delimiter.length;
        return { kind: 'string', value };
      }
      const ch = text[i]!;
      if (ch === '\n' && delimiter.length === 1) throw fail('bad_quoting', 'a string runs past the end of its line');
      if (ch !== '\\') {
        value += ch;
        i++;
        continue;
      }
      const next = text[i + 1];
      if (next === undefined) throw fail('bad_quoting', 'a string ends in a backslash');
      const hexLength = next === 'x' ? 2 : next === 'u' ? 4 : 0;
      if (hexLength > 0) {
        const hex = text.slice(i + 2, i + 2 + hexLength);
        if (!new RegExp(`^[0-9a-fA-F]{${hexLength}}$`).test(hex)) throw fail('bad_quoting', `bad \\${next} escape`);
        value += String.fromCharCode(parseInt(hex, 16));
        i += 2 + hexLength;
      } else if (next === '\n') {
        i += 2; // a backslash-newline continues the string
      } else {
        // Python keeps unknown escapes as written.
        value += SIMPLE_ESCAPES[next] ?? `\\${next}`;
        i += 2;
      }
    }
  }
}

function stringArgument(args: Map<string, Literal>, name: string, what: string): string {
  const literal = args.get(name);
  if (!literal) throw fail('missing_argument', `${what} needs ${name}="..."`);
  return literal.value;
}

function elementArgument(args: Map<string, Literal>, kind: string): number {
  const literal = args.get('element');
  if (!literal) throw fail('missing_element', `${kind} needs element="<id>"`);
  const text = literal.value.trim();
  const id = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(id)) throw fail('bad_element', `element must be a non-negative integer id, got ${JSON.stringify(literal.value)}`);
  return id;
}

function buildAction(call: string, args: Map<string, Literal>): Action {
  if (call === 'exit') {
    return { kind: 'exit', message: stringArgument(args, 'message', 'exit') };
  }
  if (call === 'go_backward' || call === 'go_forward') {
    return { kind: call === 'go_backward' ? 'Go Backward' : 'Go Forward' };
  }
  const name = args.get('action');
  if (!name) throw fail('missing_action', 'do() needs action="..."');
  const kind = KIND_BY_NAME.get(name.value.trim().replace(/\s+/g, ' ').toLowerCase());
  if (!kind) throw fail('unknown_action', `unknown action ${JSON.stringify(name.value)}`);
  // Arguments an action does not use (an element given with Press Enter) are ignored, as the reference does.
  if ((ELEMENT_KINDS as readonly string[]).includes(kind)) {
    return { kind: kind as ElementKind, element: elementArgument(args, kind) };
  }
  if ((ARGUMENT_KINDS as readonly string[]).includes(kind)) {
    const argument = stringArgument(args, 'argument', kind);
    return { kind: kind as ArgumentKind, argument, element: elementArgument(args, kind) };
  }
  return { kind: kind as PlainKind };
}

export function parseAction(output: string): ParseResult {
  try {
    if (output.trim() === '') throw fail('empty', 'the reply is empty');
    const calls = [...output.matchAll(CALL_START)];
    if (calls.length === 0) throw fail('no_action', 'no do(...), exit(...) or go_backward() call in the reply');
    // The reference's choice: an exit wins over any do, and a later call over an earlier one.
    const match = calls.filter((c) => c[1] === 'exit').at(-1) ?? calls.filter((c) => c[1] === 'do').at(-1) ?? calls.at(-1)!;
    const call = match[1]!;
    const { args, end } = readArguments(output, match.index + match[0].length);
    const action = buildAction(call, args);
    const tail = output.slice(end).replace(ALLOWED_TAIL, '');
    if (HAS_CALL.test(tail)) throw fail('multiple_actions', 'another action follows the one taken');
    const junk = tail.trim();
    if (junk) throw fail('trailing_junk', `unexpected text after the action: ${JSON.stringify(junk.slice(0, 40))}`);
    return { ok: true, action };
  } catch (error) {
    if (error instanceof Failure) return { ok: false, error: error.error };
    return { ok: false, error: { code: 'bad_syntax', message: `unparseable reply: ${String(error)}` } };
  }
}

const QUOTED_ESCAPES: Record<string, string> = { '\\': '\\\\', '"': '\\"', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function quote(value: string): string {
  let out = '"';
  for (const ch of value) {
    const escaped = QUOTED_ESCAPES[ch];
    if (escaped) out += escaped;
    else if (ch.charCodeAt(0) < 0x20) out += `\\x${ch.charCodeAt(0).toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

/** The canonical string of an action; `parseAction(formatAction(a))` gives `a` back. */
export function formatAction(action: Action): string {
  switch (action.kind) {
    case 'exit':
      return `exit(message=${quote(action.message)})`;
    case 'Click':
    case 'Hover':
      return `do(action="${action.kind}", element="${action.element}")`;
    case 'Type':
    case 'Search':
    case 'Select Dropdown Option':
      return `do(action="${action.kind}", argument=${quote(action.argument)}, element="${action.element}")`;
    default:
      return `do(action="${action.kind}")`;
  }
}
