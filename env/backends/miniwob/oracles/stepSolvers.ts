/**
 * Oracle plans for MiniWoB++ tasks whose next step depends on what the page shows after the last one (a
 * guess's feedback, a tab's or a section's content, a calendar's month): each is one `solve` step whose
 * step solver reads the current observation at every round (browser/policies/oracle.ts).
 */
import type { Observation, ObservedElement, OracleStep } from '../../../../browser/contract';
import type { SolvedStep } from '../../../../browser/policies/oracle';
import { clickAgain, clickOn, elementsOf, hoverOn, scrollAgain, pageText, quotedIn, stepByStep, typeInto, withText, type SolverInput } from './page';

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
  // Round again from the first: a section caught opening may not have shown its links yet.
  return clickStep(observation, headers[(open + 1) % headers.length]);
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

/** The month a date picker shows ("December 2016"), if one is open. */
const shownMonth = (observation: Observation) => new RegExp(`(${MONTHS.join('|')}) (\\d{4})`).exec(pageText(observation)) ?? undefined;

/**
 * A date picked in a jQuery UI datepicker: open it from its text field, page month by month to the goal's
 * month (the picker prints "December 2016" between Prev and Next), click the day; `field` is the date field.
 */
function pickDate(goal: DateGoal, field: ObservedElement | undefined, { observation, history }: SolverInput): SolvedStep | undefined {
  const shown = shownMonth(observation);
  if (!shown) return clickStep(observation, field);
  const months = (goal.year - Number(shown[2])) * 12 + goal.month - MONTHS.indexOf(shown[1]!);
  const name = months < 0 ? 'Prev' : 'Next';
  const pager = months === 0 ? undefined : elementsOf(observation, 'a').find((a) => a.text === name || a.attributes.title === name);
  const day = months === 0 ? withText(observation, 'a', String(goal.day)) : undefined;
  if (pager) return next(clickAgain(observation, pager, history));
  if (day) return next(clickOn(observation, day));
  // A picker still fading in or out shows its month without its links: look again after a pause over the page.
  const pause = field ?? observation.elements[0];
  return pause ? next(hoverOn(observation, pause)) : undefined;
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
function dropdownThenButton(goal: DropdownGoal, { observation, memory, history }: SolverInput): SolvedStep | undefined {
  const options = elementsOf(observation, 'li');
  if (options.length === 0) {
    return memory.picked ? lastly(observation, withText(observation, 'button', goal.button)) : clickStep(observation, elementsOf(observation, 'b')[0]);
  }
  const option = options.find((li) => li.text === goal.option);
  if (!option) return next(scrollAgain(observation, 'Scroll Down', history));
  memory.picked = true;
  return clickStep(observation, option);
}

interface FlightGoal {
  cheapest: boolean;
  from: string;
  to: string;
  date: DateGoal;
}

const flightGoal = (intent: string): FlightGoal | undefined => {
  const match = /^Book the (cheapest|shortest) one-way flight from: (.+) to: (.+) on (\d{2}\/\d{2}\/\d{4})\.$/.exec(intent);
  const date = match ? dateGoal(match[4]!) : undefined;
  return match && date ? { cheapest: match[1] === 'cheapest', from: match[2]!, to: match[3]!, date } : undefined;
};

/** What to type into an airport field so that its suggestions hold the one airport: "City, ST (" or "(XYZ)". */
const airportQuery = (place: string) => (/^[A-Z]{3}$/.test(place) ? `(${place})` : `${place} (`);
const isAirport = (value: string | undefined, place: string) => value !== undefined && /^.+ \([A-Z]{3}\)$/.test(value) && value.includes(place);

/** A flight as the results list shows it: its "Book flight for $P" button, price and duration. */
interface Flight {
  key: string;
  price: number;
  minutes: number;
}

/** The flights the results show now: each duration ("Duration: 5h 6m") comes before its button. */
function shownFlights(observation: Observation): (Flight & { button: ObservedElement })[] {
  const text = pageText(observation);
  const buttons = elementsOf(observation, 'button').filter((b) => /^Book flight for \$\d+$/.test(b.text));
  const durations = Array.from(text.matchAll(/Duration: (\d+)h (\d+)m Book flight for \$(\d+)/g), (m) => ({
    minutes: Number(m[1]) * 60 + Number(m[2]),
    price: Number(m[3]),
  }));
  return buttons.flatMap((button) => {
    const price = Number(button.text.slice('Book flight for $'.length));
    const flight = durations.find((d) => d.price === price);
    return flight ? [{ ...flight, key: `${price}/${flight.minutes}`, button }] : [];
  });
}

/**
 * book-flight: fill "From:" and "To:" from their suggestions, pick the date in the picker, search; then read
 * the results a screen at a time (remembered across rounds) down to their end, and book the cheapest or
 * shortest flight, scrolling back up to it.
 */
function bookFlight(goal: FlightGoal, input: SolverInput): SolvedStep | undefined {
  const { observation, memory, history } = input;
  const search = withText(observation, 'button', 'Search');
  if (search && shownMonth(observation)) return pickDate(goal.date, undefined, input);
  if (search) {
    // A field that the suggestions cover has no id this round.
    const inputs = elementsOf(observation, 'input');
    const [from, to, date] = ['From:', 'To:', undefined].map((placeholder) => inputs.find((e) => e.attributes.placeholder === placeholder));
    const place = !isAirport(from?.value, goal.from) ? goal.from : !isAirport(to?.value, goal.to) ? goal.to : undefined;
    if (place !== undefined) {
      const suggestion = elementsOf(observation, 'li').find((li) => isAirport(li.fullText ?? li.text, place));
      const field = place === goal.from ? from : to;
      if (suggestion) return clickStep(observation, suggestion);
      return field ? next(typeInto(observation, field, airportQuery(place))) : undefined;
    }
    if (!date) return undefined;
    return date.value === goal.date.text ? clickStep(observation, search) : pickDate(goal.date, date, input);
  }
  const seen = (memory.flights ??= {}) as Record<string, Flight>;
  const shown = shownFlights(observation);
  for (const flight of shown) seen[flight.key] = { key: flight.key, price: flight.price, minutes: flight.minutes };
  // Scroll down until a scroll changes nothing: the results' end.
  const scrolled = history.at(-1)?.action?.kind === 'Scroll Down';
  if (scrolled && memory.screen === observation.html) memory.readAll = true;
  memory.screen = observation.html;
  if (!memory.readAll) return next(scrollAgain(observation, 'Scroll Down', history));
  const order = (a: Flight, b: Flight) => (goal.cheapest ? a.price - b.price : a.minutes - b.minutes);
  const best = Object.values(seen).sort(order)[0];
  const button = shown.find((flight) => flight.key === best?.key)?.button;
  return button ? lastly(observation, button) : next(scrollAgain(observation, 'Scroll Up', history));
}

export const STEP_PLANNERS: Readonly<Record<string, (intent: string) => OracleStep[] | undefined>> = {
  ...Object.fromEntries(['book-flight', 'book-flight-nodelay'].map((type) => [type, stepByStep(type, flightGoal, bookFlight)])),
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
