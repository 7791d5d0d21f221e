/**
 * Oracle solvers for MiniWoB++ types that read a form, a table, a sum, a tree or a terminal: each reads
 * the instruction and the start page's observation (text runs and elements in print order), and what
 * only a later page shows (the next contact, a listed file name) through steps that read the page as
 * they run (browser/policies/oraclePlan.ts).
 */
import type { ElementMatcher, Observation, OracleStep } from '../../../../browser/contract';
import { printedTokens, type PrintedToken } from '../../../../browser/policies/oraclePlan';
import { matcherAt, type Solver } from './solver';
import { click, plan, quoted, submit, type } from './steps';

type ElementToken = Extract<PrintedToken, { id: number }>;
const isElement = (token: PrintedToken): token is ElementToken => 'id' in token;
const isText = (token: PrintedToken): token is { text: string } => 'text' in token;
const texts = (observation: Observation) =>
  printedTokens(observation.html)
    .filter(isText)
    .map((t) => t.text);

/** The text run printed right before (or right after) each element of `tag`, by id. */
function neighbourTexts(observation: Observation, tag: string, side: 'before' | 'after'): Map<number, string> {
  const tokens = printedTokens(observation.html);
  const found = new Map<number, string>();
  tokens.forEach((token, i) => {
    if (!isElement(token) || token.tag !== tag) return;
    const step = side === 'before' ? -1 : 1;
    for (let j = i + step; j >= 0 && j < tokens.length; j += step) {
      const near = tokens[j]!;
      if (isText(near)) found.set(token.id, near.text);
      if (isText(near) || near.tag === tag) break;
    }
  });
  return found;
}

/** Which input each label names, reading labels on whichever side of the inputs every input has one that `known` accepts. */
function inputsByLabel(observation: Observation, known: (label: string) => string | undefined): Map<string, number> | undefined {
  const inputs = observation.elements.filter((e) => e.tag === 'input');
  for (const side of ['before', 'after'] as const) {
    const labels = neighbourTexts(observation, 'input', side);
    const fields = new Map<string, number>();
    for (const input of inputs) {
      const field = known(labels.get(input.id) ?? '');
      if (field !== undefined) fields.set(field, input.id);
    }
    if (fields.size === inputs.length) return fields;
  }
  return undefined;
}

/** The first element with an id printed after the last input (a form's submit control, whatever it says). */
function afterLastInput(observation: Observation): ElementMatcher | undefined {
  const tokens = printedTokens(observation.html).filter(isElement);
  const last = tokens.map((t) => t.tag).lastIndexOf('input');
  const next = tokens[last + 1];
  return last >= 0 && next ? matcherAt(observation, next.id) : undefined;
}

/** multi-layouts and multi-orderings: genre, director and year into the fields their labels name, then the form's submit control. */
const movieSearch: Solver = (intent, observation) => {
  const wanted = /^Search for (.+) movies directed by (.+) from year (\d+)\.$/.exec(intent);
  if (!wanted) return undefined;
  const values: Record<string, string> = { genre: wanted[1]!, director: wanted[2]!, year: wanted[3]! };
  const field = (label: string) => (/genre/i.test(label) ? 'genre' : /director/i.test(label) ? 'director' : /year|date/i.test(label) ? 'year' : undefined);
  const fields = inputsByLabel(observation, field);
  if (!fields || fields.size !== 3) return undefined;
  const steps = [...fields].map(([name, id]) => {
    const target = matcherAt(observation, id);
    return target && type(target, values[name]!);
  });
  const go = afterLastInput(observation);
  return plan(...steps, go && click(go));
};

/** The table's value for each key (rows of two cells: key, value). */
function tableValues(observation: Observation): Map<string, string> {
  const cells = Array.from(observation.html.matchAll(/<td[^>]*>([^<]*)<\/td>/g), (m) => m[1]!.trim());
  const values = new Map<string, string>();
  for (let i = 0; i + 1 < cells.length; i += 2) values.set(cells[i]!, cells[i + 1]!);
  return values;
}

/** "x = ..." solved for x: a + x = b, x + a = b, x - a = b, a - x = b. */
function solveForX(equation: string): number | undefined {
  const m = /^(-?\d+|x) ([+-]) (-?\d+|x) = (-?\d+)$/.exec(equation.trim());
  if (!m) return undefined;
  const [, left, op, right, total] = m;
  const sum = Number(total);
  if (left === 'x') return op === '+' ? sum - Number(right) : sum + Number(right);
  if (right === 'x') return op === '+' ? sum - Number(left) : Number(left) - sum;
  return undefined;
}

function arithmetic(expression: string): number | undefined {
  const m = /^(-?\d+) ([+\-x*×]) (-?\d+) =$/.exec(expression.trim());
  if (!m) return undefined;
  const [a, b] = [Number(m[1]), Number(m[3])];
  return m[2] === '+' ? a + b : m[2] === '-' ? a - b : a * b;
}

const answerAndSubmit = (answer: number | undefined): OracleStep[] | undefined =>
  answer === undefined ? undefined : [type({ tag: 'input' }, String(answer)), submit];

const FILE_PATTERN = (extension: string) =>
  // The listing after `ls` is the run of names up to the next prompt; pick one with the extension (or without any).
  extension === '' ? String.raw`user\$ ls (?:\S+\.\S+ )*([A-Za-z0-9_-]+)(?= )` : String.raw`user\$ ls (?:\S+ )*?(\S+\.${extension.replace(/\./g, '\\.')})(?= )`;

const autocomplete: Solver = (intent) => {
  const [start, end] = quoted(intent);
  if (start === undefined) return undefined;
  // The suggestions are printed after the form's Submit button (as list items or their inner boxes, by profile).
  const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const option: ElementMatcher = { after: 'Submit', textMatches: `^${escaped(start)}.*${end === undefined ? '' : `${escaped(end)}$`}` };
  return [type({ tag: 'input' }, start), click(option), submit];
};

/** Each menu item with the food types its icons name (the titles printed after its name), as far as the start page shows them. */
function menuItems(observation: Observation): Map<string, string[]> {
  const items = new Map<string, string[]>();
  let current: string[] | undefined;
  for (const match of observation.html.matchAll(/<div[^>]*> ([^<]+?) <\/div>|<img title="([^"]+)"/g)) {
    if (match[1] !== undefined) items.set(match[1], (current = []));
    else current?.push(match[2]!);
  }
  return items;
}

/** order-food: one of each named item, or n of an item of the asked type, each through the "+" after its name; then Order!. */
const orderFood: Solver = (intent, observation) => {
  const named = /^Order one of each item: (.+)$/.exec(intent)?.[1]?.split(', ');
  const byType = /^Order (\d+) items that are (\S+)$/.exec(intent);
  const typed = byType ? [...menuItems(observation)].find(([, types]) => types.includes(byType[2]!))?.[0] : undefined;
  const items = named ?? (typed ? Array.from({ length: Number(byType![1]) }, () => typed) : undefined);
  if (!items) return undefined;
  const top: ElementMatcher = { tag: 'span', text: '+', after: 'Appetizers' };
  const order: ElementMatcher = { tag: 'button', text: 'Order!' };
  const add = (item: string): OracleStep[] => {
    const plus: ElementMatcher = { tag: 'span', text: '+', after: item.trim() };
    // The menu scrolls in its box: back to the top, then down until the item's "+" shows.
    return [{ action: 'Scroll Up', until: top }, { action: 'Scroll Down', until: plus }, click(plus)];
  };
  return [...items.flatMap(add), { action: 'Scroll Down', until: order }, click(order)];
};

export const PAGE_SOLVERS: Readonly<Record<string, Solver>> = {
  'order-food': orderFood,
  'multi-layouts': movieSearch,
  'multi-orderings': movieSearch,
  'navigate-tree': (intent, observation) => {
    const [name] = quoted(intent);
    if (name === undefined) return undefined;
    const target: OracleStep = click({ text: name });
    if (observation.elements.some((e) => e.text === name || e.fullText === name)) return [target];
    // Folders print their name as an element of their own; open each (the last first, so the earlier ones keep their places).
    const folders = observation.elements.filter((e) => e.tag === 'span' && e.text);
    const opens = folders.reverse().map((folder) => {
      const same = observation.elements.filter((e) => e.tag === 'span' && e.text === folder.text);
      return click({ tag: 'span', text: folder.text, nth: same.indexOf(folder) });
    });
    return [...opens, target];
  },
  'odd-or-even': (_intent, observation) => {
    const numbers = texts(observation).filter((text) => /^-?\d+$/.test(text));
    if (!numbers.length) return undefined;
    return [...numbers.map((n, row) => click({ tag: 'button', text: Math.abs(Number(n)) % 2 === 1 ? 'Odd' : 'Even', nth: row })), submit];
  },
  'phone-book': (intent) => {
    const wanted = /^Find (\S+) in the contact book and click on their (phone|email|address)/.exec(intent);
    if (!wanted) return undefined;
    const label = { phone: 'Phone:', email: 'Email:', address: 'Address:' }[wanted[2] as 'phone' | 'email' | 'address'];
    return [{ action: 'Click', target: { tag: 'a', text: '>' }, until: { tag: 'a', after: wanted[1]! } }, click({ tag: 'a', after: label })];
  },
  'read-table': (intent, observation) => {
    const key = /^Enter the value of (.+) into the text field and press Submit\.$/.exec(intent)?.[1];
    const value = key === undefined ? undefined : tableValues(observation).get(key);
    return value === undefined ? undefined : [type({ tag: 'input' }, value), submit];
  },
  'read-table-2': (_intent, observation) => {
    const values = tableValues(observation);
    const labels = neighbourTexts(observation, 'input', 'before');
    const steps = observation.elements
      .filter((e) => e.tag === 'input')
      .map((input, nth) => {
        const value = values.get((labels.get(input.id) ?? '').replace(/:$/, ''));
        return value === undefined ? undefined : type({ tag: 'input', nth }, value);
      });
    return plan(...steps, submit);
  },
  'scroll-text': (_intent, observation) => {
    const text = observation.elements.find((e) => e.tag === 'textarea')?.value ?? '';
    const last = text
      .trim()
      .split(/\s+/)
      .pop()
      ?.replace(/[^a-zA-Z0-9]/g, '');
    return last ? [type({ tag: 'input' }, last), submit] : undefined;
  },
  'scroll-text-2': (intent) => {
    const where = /to the (top|bottom) of the text/.exec(intent)?.[1];
    if (!where) return undefined;
    // The observation does not show how far the box is scrolled: scroll as far as the limit on repeated actions allows.
    const scroll: OracleStep = { action: where === 'top' ? 'Scroll Up' : 'Scroll Down' };
    return [scroll, scroll, scroll, scroll, submit];
  },
  'search-engine': (intent) => {
    const wanted = /^Use the textbox to enter "(.+)" and press "Search", then find and click the (\d+)\w\w search result\.$/.exec(intent);
    if (!wanted) return undefined;
    const index = Number(wanted[2]) - 1;
    const page = Math.floor(index / 3) + 1;
    const pages = page > 1 ? [click({ tag: 'a', text: String(page) })] : [];
    return [type({ tag: 'input' }, wanted[1]!), click({ tag: 'button', text: 'Search' }), ...pages, click({ tag: 'a', nth: index % 3 })];
  },
  'sign-agreement': (intent) => {
    if (/^Click the cancel button\.$/.test(intent)) return [click({ tag: 'button', text: 'Cancel' })];
    const [name, button] = quoted(intent);
    if (name === undefined || button === undefined) return undefined;
    const nameInput: ElementMatcher = { tag: 'input', attributes: { placeholder: 'Name' }, enabled: true };
    return [{ action: 'Scroll Down', until: nameInput }, type(nameInput, name), click({ tag: 'button', text: button })];
  },
  'simple-algebra': (_intent, observation) => answerAndSubmit(solveForX(texts(observation).find((t) => t.includes('x') && t.includes('=')) ?? '')),
  'simple-arithmetic': (_intent, observation) => answerAndSubmit(arithmetic(texts(observation).find((t) => /=$/.test(t)) ?? '')),
  terminal: (intent) => {
    const extension = /with the extension \.(\S+)$/.exec(intent)?.[1] ?? (/no file extension/.test(intent) ? '' : undefined);
    if (extension === undefined) return undefined;
    const terminal: ElementMatcher = { textIncludes: 'user$' };
    return [
      { action: 'Search', target: terminal, argument: 'ls' },
      { action: 'Search', target: terminal, argument: 'rm $1', argumentFrom: FILE_PATTERN(extension) },
    ];
  },
  'unicode-test': (intent) => {
    const [label] = quoted(intent);
    return label === undefined ? undefined : [click({ tag: 'button', text: label })];
  },
  'use-autocomplete': autocomplete,
  'use-autocomplete-nodelay': autocomplete,
};
