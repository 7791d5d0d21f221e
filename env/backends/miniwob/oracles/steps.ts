/**
 * Oracle plans for MiniWoB++ tasks whose next step depends on what the page shows after the last one (a
 * guess's feedback, a tab's or a section's content, a calendar's month): each is one `solve` step whose
 * step solver reads the current observation at every round (browser/policies/oracle.ts).
 */
import type { Observation, ObservedElement, OracleStep } from '../../../../browser/contract';
import type { SolvedStep } from '../../../../browser/policies/oracle';
import { clickAgain, clickOn, elementsOf, pageText, quotedIn, stepByStep, typeInto, withText, type SolverInput } from './page';

const done = (step: OracleStep): SolvedStep => ({ step, last: true });
const next = (step: OracleStep): SolvedStep => ({ step });
const clickStep = (observation: Observation, element: ObservedElement | undefined): SolvedStep | undefined =>
  element ? next(clickOn(observation, element)) : undefined;
const lastly = (observation: Observation, element: ObservedElement | undefined): SolvedStep | undefined =>
  element ? done(clickOn(observation, element)) : undefined;

/** The link (a span) the instruction names, if the page shows it now. */
const shownLink = (observation: Observation, text: string) => withText(observation, 'span', text);

/** "Switch between the tabs to find and click on the link "X"": click X once a tab shows it, else the next tab. */
function findInTabs(link: string, { observation, history }: SolverInput): SolvedStep | undefined {
  const shown = shownLink(observation, link);
  if (shown) return lastly(observation, shown);
  // The tabs come first on the page, so their ids stay put; every earlier round opened one, from the second on.
  return clickStep(observation, elementsOf(observation, 'a')[history.length + 1]);
}

const linkGoal = (intent: string) => (/click on the link "/.test(intent) ? quotedIn(intent)[0] : undefined);

/** "Expand the sections below, to find and click on the link "X"": open each closed section in turn until X shows. */
function findInSections(link: string, { observation }: SolverInput): SolvedStep | undefined {
  const shown = shownLink(observation, link);
  if (shown) return lastly(observation, shown);
  const headers = elementsOf(observation, 'h3');
  const open = headers.findIndex((h) => h.attributes['aria-expanded'] === 'true');
  return clickStep(observation, headers[open + 1]);
}

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

interface DateGoal {
  month: number;
  day: number;
  year: number;
  text: string;
}

const dateGoal = (intent: string): DateGoal | undefined => {
  const match = /(\d{2})\/(\d{2})\/(\d{4})/.exec(intent);
  return match ? { month: Number(match[1]) - 1, day: Number(match[2]), year: Number(match[3]), text: match[0] } : undefined;
};

/**
 * A date picked in a jQuery UI datepicker: open it from its text field, page month by month to the goal's
 * month (the picker prints "December 2016" between Prev and Next), click the day; `field` is the date field.
 */
function pickDate(goal: DateGoal, field: ObservedElement, { observation, history }: SolverInput): SolvedStep | undefined {
  const shown = new RegExp(`(${MONTHS.join('|')}) (\\d{4})`).exec(pageText(observation));
  const prev = withText(observation, 'a', 'Prev');
  if (!shown || !prev) return clickStep(observation, field);
  const months = (goal.year - Number(shown[2])) * 12 + goal.month - MONTHS.indexOf(shown[1]!);
  if (months < 0) return next(clickAgain(observation, prev, history));
  if (months > 0) {
    const later = withText(observation, 'a', 'Next');
    return later ? next(clickAgain(observation, later, history)) : undefined;
  }
  return clickStep(observation, withText(observation, 'a', String(goal.day)));
}

/** choose-date: pick the date, then submit once the field shows it. */
function chooseDate(goal: DateGoal, input: SolverInput): SolvedStep | undefined {
  const { observation } = input;
  const field = elementsOf(observation, 'input')[0];
  if (!field) return undefined;
  if (field.value === goal.text) return lastly(observation, withText(observation, 'button', 'Submit'));
  return pickDate(goal, field, input);
}

/** guess-number: halve the range 0-9 with each guess; the feedback names the last guess's side. */
function guessNumber(_goal: true, { observation, history }: SolverInput): SolvedStep | undefined {
  const text = pageText(observation);
  if (/Correct!/.test(text)) return done({ action: 'exit', message: '' });
  const field = elementsOf(observation, 'input')[0];
  const last = history.at(-1)?.action;
  if (last?.kind === 'Type') return clickStep(observation, withText(observation, 'button', 'Submit'));
  const guesses = history.flatMap((round) => (round.action?.kind === 'Type' ? [Number(round.action.argument)] : []));
  let [low, high] = [0, 9];
  guesses.forEach((guess, i) => {
    // A later guess above an earlier one means the feedback said "higher".
    const higher = i + 1 < guesses.length ? guesses[i + 1]! > guess : /The number is higher/.test(text);
    if (higher) low = guess + 1;
    else high = guess - 1;
  });
  return field ? next(typeInto(observation, field, String(Math.floor((low + high) / 2)))) : undefined;
}

type GenerateGoal = (n: number) => boolean;

const generateGoal = (intent: string): GenerateGoal | undefined => {
  const less = /less than (\d+)/.exec(intent);
  if (less) return (n) => n < Number(less[1]);
  const greater = /greater than (\d+)/.exec(intent);
  if (greater) return (n) => n > Number(greater[1]);
  if (/an odd number/.test(intent)) return (n) => n % 2 === 1;
  if (/an even number/.test(intent)) return (n) => n % 2 === 0;
  return undefined;
};

/** generate-number: generate until the shown number fits, then submit. */
function generateNumber(fits: GenerateGoal, { observation, history }: SolverInput): SolvedStep | undefined {
  const shown = /(-|\d+) Generate Submit/.exec(pageText(observation))?.[1];
  if (shown !== undefined && shown !== '-' && fits(Number(shown))) return lastly(observation, withText(observation, 'button', 'Submit'));
  const generate = withText(observation, 'button', 'Generate');
  return generate ? next(clickAgain(observation, generate, history)) : undefined;
}

/** button-delay: click ONE, then TWO the asked number of seconds after it. */
function buttonDelay(seconds: number, { observation, history }: SolverInput): SolvedStep | undefined {
  const button = withText(observation, 'button', history.length === 0 ? 'ONE' : 'TWO');
  if (!button) return undefined;
  return history.length === 0 ? next(clickOn(observation, button)) : { step: clickOn(observation, button), afterPreviousMs: seconds * 1000, last: true };
}

interface Login {
  username: string;
  password: string;
}

/** login-user-popup: fill both fields and log in; a popup that a field's focus opens is cancelled, and the field typed again. */
function loginPastPopup(login: Login, { observation, history }: SolverInput): SolvedStep | undefined {
  const cancel = withText(observation, 'button', 'Cancel');
  if (cancel) return clickStep(observation, cancel);
  const [user, password] = elementsOf(observation, 'input');
  if (!user || !password) return undefined;
  if (user.value !== login.username) return next(typeInto(observation, user, login.username));
  // A password field's value is not printed: it was typed when the last round typed it and no popup followed.
  const typed = history.at(-1)?.action?.kind === 'Type' && password.value === login.password;
  if (!typed && password.value !== login.password) return next(typeInto(observation, password, login.password));
  return lastly(observation, withText(observation, 'button', 'OK'));
}

interface DropdownGoal {
  option: string;
  button: string;
}

/**
 * form-sequence-3: the select is drawn by a script (its native one hidden): open it with its arrow, scroll
 * its list to the option and click it, then click the button.
 */
function dropdownThenButton(goal: DropdownGoal, { observation, memory }: SolverInput): SolvedStep | undefined {
  const options = elementsOf(observation, 'li');
  if (options.length === 0) {
    return memory.picked ? lastly(observation, withText(observation, 'button', goal.button)) : clickStep(observation, elementsOf(observation, 'b')[0]);
  }
  const option = options.find((li) => li.text === goal.option);
  if (!option) return next({ action: 'Scroll Down' });
  memory.picked = true;
  return clickStep(observation, option);
}

export const STEP_PLANNERS: Readonly<Record<string, (intent: string) => OracleStep[] | undefined>> = {
  'button-delay': stepByStep(
    'button-delay',
    (intent) => {
      const seconds = /wait (\d+) seconds?/.exec(intent)?.[1];
      return seconds === undefined ? undefined : Number(seconds);
    },
    buttonDelay,
  ),
  ...Object.fromEntries(
    ['choose-date', 'choose-date-easy', 'choose-date-medium', 'choose-date-nodelay'].map((type) => [type, stepByStep(type, dateGoal, chooseDate)]),
  ),
  ...Object.fromEntries(['click-collapsible-2', 'click-collapsible-2-nodelay'].map((type) => [type, stepByStep(type, linkGoal, findInSections)])),
  ...Object.fromEntries(['click-tab-2', 'click-tab-2-easy', 'click-tab-2-hard'].map((type) => [type, stepByStep(type, linkGoal, findInTabs)])),
  // Its second tab is emptied: when the first does not show the link, clicking the second tab is the answer.
  'click-tab-2-medium': stepByStep('click-tab-2-medium', linkGoal, (link, { observation }) =>
    lastly(observation, shownLink(observation, link) ?? elementsOf(observation, 'a')[1]),
  ),
  'form-sequence-3': stepByStep(
    'form-sequence-3',
    (intent) => {
      const match = /^Choose (.+) from the dropdown, then click the button labeled "(\w+)"\.$/.exec(intent);
      return match ? { option: match[1]!, button: match[2]! } : undefined;
    },
    dropdownThenButton,
  ),
  'generate-number': stepByStep('generate-number', generateGoal, generateNumber),
  'guess-number': stepByStep('guess-number', (intent) => (/^Guess the number between 0-9/.test(intent) ? true : undefined), guessNumber),
  'login-user-popup': stepByStep(
    'login-user-popup',
    (intent) => {
      const [username, password] = quotedIn(intent);
      return username === undefined || password === undefined ? undefined : { username, password };
    },
    loginPastPopup,
  ),
};
