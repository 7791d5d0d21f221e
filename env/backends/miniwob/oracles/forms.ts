/**
 * Oracle plans for MiniWoB++ forms whose whole answer the start page shows: the plan is written once, from
 * the instruction and the start page's observation (see ../oracle.ts).
 */
import type { Observation, ObservedElement, OracleStep } from '../../../../browser/contract';
import { clickOn, elementsOf, ordinal, pageText, quotedIn, typeInto, withText } from './page';

type Planner = (intent: string, observation: Observation) => OracleStep[] | undefined;

/** Every step, or no plan when an element was not found. */
const all = (...steps: (OracleStep | undefined)[]): OracleStep[] | undefined =>
  steps.every((step): step is OracleStep => step !== undefined) ? steps : undefined;
const on = (observation: Observation, element: ObservedElement | undefined) => (element ? clickOn(observation, element) : undefined);
const submitOf = (observation: Observation) => on(observation, withText(observation, 'button', 'Submit'));

/** Word groups of the same meaning (click-checkboxes-soft asks for a word's synonyms). */
const SYNONYM_GROUPS = [
  'big large huge enormous gigantic',
  'small tiny little mini petite',
  'red scarlet crimson vermillion',
  'happy cheerful joyful gleeful delighted',
  'sad unhappy sorrowful miserable tragic',
  'angry mad furious irritated',
  'evil wicked immoral sinful corrupt depraved',
  'wrong incorrect mistaken erroneous',
  'real genuine actual',
  'strange odd peculiar unusual weird',
  'stop cease halt end finish',
  'scared terrified panicked fearful frightened afraid',
  'quiet calm peaceful serene mild',
  'old aged archaic',
  'love like adore favor',
  'kill murder assassinate',
  'keep retain preserve sustain maintain',
  'hide conceal camouflage',
  'hate despise loathe detest dislike',
  'funny humorous amusing comical laughable',
  'fat fleshy plump chubby',
  'stupid dumb dull unwise',
  'delicious savory delectable appetizing',
  'cut slice carve chop',
  'brave courageous fearless',
  'begin start initiate launch',
  'answer reply response',
  'television televisions TV TVs',
  'house home houses homes',
  'fire flame fires flames',
  'pig pork swine',
  'rabbit rabbits bunny bunnies',
  'car cars automobile automobiles vehicle vehicles',
  'water',
].map((group) => group.split(' '));

const synonyms = (a: string, b: string) => SYNONYM_GROUPS.some((group) => group.includes(a) && group.includes(b));

/** "… the shortest duration" / "… the cheapest cost": the ticket's button and what to compare. */
interface Ticket {
  button: ObservedElement;
  minutes: number;
  price: number;
}

/** buy-ticket's tickets: each "Book for $P" button after its "Duration: Hh Mm". */
function tickets(observation: Observation): Ticket[] {
  const durations = Array.from(pageText(observation).matchAll(/Duration: (\d+)h (\d+)m/g), (m) => Number(m[1]) * 60 + Number(m[2]));
  const buttons = elementsOf(observation, 'button').filter((b) => /^Book for \$\d+$/.test(b.text));
  if (durations.length !== buttons.length) return [];
  return buttons.map((button, i) => ({ button, minutes: durations[i]!, price: Number(button.text.slice('Book for $'.length)) }));
}

const TICKET_ORDER: Record<string, (a: Ticket, b: Ticket) => number> = {
  'cheapest cost': (a, b) => a.price - b.price,
  'most expensive cost': (a, b) => b.price - a.price,
  'shortest duration': (a, b) => a.minutes - b.minutes,
  'longest duration': (a, b) => b.minutes - a.minutes,
};

/** copy-paste(-2): type the text area's text (its value as the page holds it, spaces included) into the text input. */
function copyInto(observation: Observation, source: ObservedElement | undefined): OracleStep[] | undefined {
  const input = elementsOf(observation, 'input').find((e) => e.attributes.type === 'text');
  return source?.value && input ? all(typeInto(observation, input, source.value), submitOf(observation)) : undefined;
}

/** click-menu-2's items by their jQuery UI icons (the instruction names one or the other). */
const ICON_ITEMS: Record<string, string> = {
  disk: 'Save',
  'seek-start': 'Prev',
  stop: 'Stop',
  play: 'Play',
  'seek-end': 'Next',
  zoomin: 'Zoom In',
  zoomout: 'Zoom Out',
};

/** click-menu-2's items under "Playback"; the others are at the top level. */
const PLAYBACK_ITEMS = ['Prev', 'Stop', 'Play', 'Next'];

export const FORM_PLANNERS: Readonly<Record<string, Planner>> = {
  'buy-ticket': (intent, observation) => {
    const order = TICKET_ORDER[/^Buy the ticket with the (.+)\.$/.exec(intent)?.[1] ?? ''];
    const best = order ? tickets(observation).sort(order)[0] : undefined;
    return best ? [clickOn(observation, best.button)] : undefined;
  },
  'click-checkboxes-soft': (intent, observation) => {
    const words = /^Select words similar to (.+) and click Submit\.$/.exec(intent)?.[1];
    if (words === undefined) return undefined;
    const wanted = words === 'nothing' ? [] : words.split(', ');
    const boxes = elementsOf(observation, 'input').filter((e) => e.attributes.type === 'checkbox');
    const ticks = boxes.filter((box) => wanted.some((word) => synonyms(word, labelOf(observation, box))));
    return all(...ticks.map((box) => clickOn(observation, box)), submitOf(observation));
  },
  'click-menu': (intent) => {
    const path = /^Select (.+)$/.exec(intent)?.[1]?.split('>');
    if (!path) return undefined;
    const leaf = path.pop()!;
    return [...path.map((item): OracleStep => ({ action: 'Hover', target: { text: item } })), { action: 'Click', target: { text: leaf } }];
  },
  'click-menu-2': (intent) => {
    const label = quotedIn(intent)[1] ?? ICON_ITEMS[/the item with the (\S+) icon\.$/.exec(intent)?.[1] ?? ''];
    if (label === undefined) return undefined;
    const menu: OracleStep = { action: 'Click', target: { tag: 'button', text: 'Menu' } };
    const open: OracleStep[] = PLAYBACK_ITEMS.includes(label) ? [{ action: 'Hover', target: { text: 'Playback' } }] : [];
    return [menu, ...open, { action: 'Click', target: { text: label } }];
  },
  'copy-paste': (_intent, observation) => copyInto(observation, elementsOf(observation, 'textarea')[0]),
  'copy-paste-2': (intent, observation) => {
    const nth = ordinal(/the (\w+) text area/.exec(intent)?.[1]);
    return nth === undefined ? undefined : copyInto(observation, elementsOf(observation, 'textarea')[nth - 1]);
  },
  'find-word': (intent, observation) => {
    const nth = ordinal(/^Find the (\w+) word/.exec(intent)?.[1]);
    const input = elementsOf(observation, 'input')[0];
    const paragraph = pageText(observation).split(' Submit')[0]!.split(' ');
    const word = nth === undefined ? undefined : paragraph[nth - 1]?.replace(/[^a-zA-Z]/g, '');
    return word && input ? all(typeInto(observation, input, word), submitOf(observation)) : undefined;
  },
  'form-sequence-2': (intent, observation) => {
    const match = /^Check the (\w+) radio button and enter the number "(-?\d+)" into the (\w+) textbox\.$/.exec(intent);
    if (!match) return undefined;
    const radio = elementsOf(observation, 'input').filter((e) => e.attributes.type === 'radio')[(ordinal(match[1]) ?? 0) - 1];
    const box = elementsOf(observation, 'input').filter((e) => e.attributes.type === 'text')[(ordinal(match[3]) ?? 0) - 1];
    return radio && box ? all(clickOn(observation, radio), typeInto(observation, box, match[2]!), submitOf(observation)) : undefined;
  },
};

/** The text a checkbox is labelled with in the printed observation (its label's text follows it). */
function labelOf(observation: Observation, box: ObservedElement): string {
  return new RegExp(`<input id="${box.id}"[^>]*>\\s*</input>\\s*([^<]+?)\\s*<`).exec(observation.html)?.[1] ?? '';
}
