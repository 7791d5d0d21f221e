/**
 * Oracle solvers for MiniWoB++ task types: each reads the task's instruction and the observation of its
 * seeded start page (as the task source sees it) and writes an oracle plan, `OracleStep`s whose element
 * matchers the oracle policy resolves against each step's observation (browser/policies/oracle.ts).
 * A type without a solver (or an instance a solver cannot read) gets no plan: the curriculum reaches it.
 */
import type { ElementMatcher, Observation, OracleStep } from '../../../browser/contract';
import { MINIWOB_PLANNERS } from './oracles';
import { EMAIL_SOLVERS } from './oracles/email';
import { PAGE_SOLVERS } from './oracles/pages';
import { matcherAt, type Solver } from './oracles/solver';
import { WIDGET_SOLVERS } from './oracles/widgets';
import { click, clickOn, plan, quoted, submit, type } from './oracles/steps';

/** The element the observation labels `label` (a checkbox or radio button by its label's text). */
function labelled(observation: Observation, label: string): ElementMatcher | undefined {
  const escaped = label.replace(/&/g, '&amp;').replace(/"/g, '&quot;');
  for (const match of observation.html.matchAll(/<\w+ id="(\d+)"[^>]*? data-label="([^"]*)"/g)) {
    if (match[2] === escaped) return matcherAt(observation, Number(match[1]));
  }
  return undefined;
}

/** The dialog's close button (jQuery UI's "x", an icon inside a button titled Close). */
function closeButton(observation: Observation): ElementMatcher | undefined {
  const match = /title="Close"[^>]*> <\w+ id="(\d+)"/.exec(observation.html);
  return match ? matcherAt(observation, Number(match[1])) : undefined;
}

/** "Select A, B and click Submit." (or "Select nothing ..."): tick each named box, then submit. */
const selectAndSubmit: Solver = (intent, observation) => {
  const names = /^Select (.*) and click Submit\.$/.exec(intent)?.[1];
  if (names === undefined) return undefined;
  const wanted = names === 'nothing' ? [] : names.split(', ');
  return plan(...wanted.map((name) => clickOn(labelled(observation, name))), submit);
};

const typeAndSubmit: Solver = (intent) => {
  const [text] = quoted(intent);
  return text === undefined ? undefined : [type({ tag: 'input' }, text), submit];
};

const clickNamedButton: Solver = (intent) => {
  const name = /button (\S+?)\.?$/.exec(intent)?.[1];
  return name ? [click({ tag: 'button', text: name })] : undefined;
};

const expandAndSubmit: Solver = () => [click({ tag: 'h3' }), submit];

const ORDINALS: Record<string, number> = { '1st': 0, '2nd': 1, '3rd': 2, '4th': 3, '5th': 4, '6th': 5 };

/** click-widget's widget names, and the elements they are. */
const WIDGETS: Record<string, ElementMatcher> = {
  button: { tag: 'button' },
  checkbox: { tag: 'input', attributes: { type: 'checkbox' } },
  radio: { tag: 'input', attributes: { type: 'radio' } },
  text: { tag: 'input', attributes: { 'data-type': 'text' } },
  textarea: { tag: 'textarea' },
};

export const SOLVERS: Readonly<Record<string, Solver>> = {
  ...MINIWOB_PLANNERS,
  'click-button': (intent) => {
    const [name] = quoted(intent);
    return name === undefined ? undefined : [click({ tag: 'button', text: name })];
  },
  'click-button-sequence': (intent) => {
    const names = /^Click button (\S+), then click button (\S+)\.$/.exec(intent);
    return names ? [click({ tag: 'button', text: names[1]! }), click({ tag: 'button', text: names[2]! })] : undefined;
  },
  'click-checkboxes': selectAndSubmit,
  'click-checkboxes-large': selectAndSubmit,
  'click-checkboxes-transfer': selectAndSubmit,
  'click-collapsible': expandAndSubmit,
  'click-collapsible-nodelay': expandAndSubmit,
  'click-dialog': (_intent, observation) => plan(clickOn(closeButton(observation))),
  'click-dialog-2': (intent, observation) => {
    const [label] = quoted(intent);
    if (label === undefined) return undefined;
    return plan(label.toLowerCase() === 'x' ? clickOn(closeButton(observation)) : click({ tag: 'button', text: label }));
  },
  'click-link': (intent) => {
    const [text] = quoted(intent);
    return text === undefined ? undefined : [click({ tag: 'span', text })];
  },
  'click-option': selectAndSubmit,
  'click-tab': (intent) => {
    const tab = /^Click on (Tab #\d+)\.$/.exec(intent)?.[1];
    return tab ? [click({ tag: 'a', text: tab })] : undefined;
  },
  'click-test': () => [click({ tag: 'button' })],
  'click-test-2': clickNamedButton,
  'click-test-transfer': clickNamedButton,
  'click-widget': (intent) => {
    const name = quoted(intent)[0] ?? '';
    const widget = WIDGETS[name];
    return widget ? [click(widget)] : undefined;
  },
  'choose-list': (intent) => {
    const option = /^Select (.+) from the list and click Submit\.$/.exec(intent)?.[1];
    return option ? [{ action: 'Select Dropdown Option', target: { tag: 'select' }, argument: option }, submit] : undefined;
  },
  'enter-password': (intent) => {
    const [password] = quoted(intent);
    return password === undefined ? undefined : [type({ tag: 'input', nth: 0 }, password), type({ tag: 'input', nth: 1 }, password), submit];
  },
  'enter-text': typeAndSubmit,
  'enter-text-dynamic': typeAndSubmit,
  'enter-text-2': (intent) => {
    const [text] = quoted(intent);
    if (text === undefined) return undefined;
    const cased = /lower case/.test(intent) ? text.toLowerCase() : /upper case/.test(intent) ? text.toUpperCase() : undefined;
    return cased === undefined ? undefined : [type({ tag: 'input' }, cased), submit];
  },
  'focus-text': () => [click({ tag: 'input' })],
  'focus-text-2': (intent) => {
    const nth = ORDINALS[/the (\w+) input textbox/.exec(intent)?.[1] ?? ''];
    return nth === undefined ? undefined : [click({ tag: 'input', nth })];
  },
  ...WIDGET_SOLVERS,
  'login-user': (intent) => {
    const [username, password] = quoted(intent);
    if (username === undefined || password === undefined) return undefined;
    return [type({ tag: 'input', nth: 0 }, username), type({ tag: 'input', nth: 1 }, password), click({ tag: 'button', text: 'Login' })];
  },
  ...EMAIL_SOLVERS,
  ...PAGE_SOLVERS,
};

export const ORACLE_TASK_TYPES: readonly string[] = Object.keys(SOLVERS);

/** The oracle plan of one task, if its type has a solver that can read this instance. */
export function solveMiniwob(taskType: string, intent: string, observation: Observation, scrolled: readonly Observation[] = []): OracleStep[] | undefined {
  const solver = SOLVERS[taskType];
  return solver ? solver(intent, observation, scrolled) : undefined;
}
