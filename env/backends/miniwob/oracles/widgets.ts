/**
 * Oracle solvers for MiniWoB++ types whose controls need the executor's typed inputs, script-bound
 * icons and named sprite icons (issue 56): a date or a time typed as the instruction writes it, a spinner
 * stepped with its arrow icons, and social-media's icons and "more" menu, found through the scrolled views.
 */
import type { ElementMatcher, Observation, OracleStep } from '../../../../browser/contract';
import { matcherAt, type Solver } from './solver';

const submit: OracleStep = { action: 'Click', target: { tag: 'button', text: 'Submit' } };

/** Types the value the instruction names (`Enter <value> as the ...`) into the page's one input, then submits. */
const enterAsWritten =
  (pattern: RegExp): Solver =>
  (intent) => {
    const value = pattern.exec(intent)?.[1];
    return value === undefined ? undefined : [{ action: 'Type', target: { tag: 'input' }, argument: value }, submit];
  };

/** The element the observation names `label` (an icon's name or a field's label). */
function named(observation: Observation, label: string): ElementMatcher | undefined {
  for (const match of observation.html.matchAll(/<\w+ id="(\d+)"[^>]*? data-label="([^"]*)"/g)) {
    if (match[2] === label) return matcherAt(observation, Number(match[1]));
  }
  return undefined;
}

/** An episode ends at the fifth identical action in a row (browser/episode.ts). */
const MAX_SAME_ACTIONS = 4;

/**
 * use-spinner: the spinner takes no keys, so its up or down arrow is clicked once per step from 0; a
 * hover over the arrow after every fourth click keeps a long run from reading as a stuck agent.
 */
const useSpinner: Solver = (intent, observation) => {
  const wanted = /^Select (-?\d+) with the spinner/.exec(intent)?.[1];
  if (wanted === undefined) return undefined;
  const n = Number(wanted);
  if (n === 0) return [submit];
  const arrow = named(observation, n > 0 ? 'up arrow' : 'down arrow');
  if (!arrow) return undefined;
  const steps: OracleStep[] = [];
  for (let i = 1; i <= Math.abs(n); i++) {
    steps.push({ action: 'Click', target: arrow });
    if (i % MAX_SAME_ACTIONS === 0 && i < Math.abs(n)) steps.push({ action: 'Hover', target: arrow });
  }
  return [...steps, submit];
};

/** One printed element of a view: its id (if any), icon name, text and box. */
interface Printed {
  id?: number;
  label?: string;
  text: string;
  y: number;
}

function printedOf(view: Observation): Printed[] {
  const out: Printed[] = [];
  const pattern = /<\w+(?: id="(\d+)")?((?: [\w-]+="[^"]*")*)> ([^<]*)/g;
  for (const match of view.html.matchAll(pattern)) {
    const box = /data-bbox="-?\d+,(-?\d+),/.exec(match[2]!);
    if (!box) continue;
    const label = /data-label="([^"]*)"/.exec(match[2]!)?.[1];
    out.push({ ...(match[1] ? { id: Number(match[1]) } : {}), ...(label ? { label } : {}), text: match[3]!.trim(), y: Number(box[1]) });
  }
  return out;
}

/**
 * How far each view is scrolled from the first: the shift the printed texts show between consecutive
 * views, each pair of equal texts voting with the weight of how rare the text is (one author's name
 * repeats in every post of theirs, a post's body rarely repeats).
 */
function offsets(views: readonly Printed[][]): number[] {
  const result = [0];
  for (let k = 1; k < views.length; k++) {
    const count = (view: readonly Printed[], text: string) => view.filter((item) => item.text === text).length;
    const votes = new Map<number, number>();
    for (const before of views[k - 1]!) {
      if (before.text === '') continue;
      for (const after of views[k]!) {
        const shift = before.y - after.y;
        if (shift <= 0 || before.text !== after.text) continue;
        const weight = 1 / (count(views[k - 1]!, before.text) * count(views[k]!, after.text));
        votes.set(shift, (votes.get(shift) ?? 0) + weight);
      }
    }
    const best = [...votes.entries()].sort((a, b) => b[1] - a[1])[0]?.[0] ?? 0;
    result.push(result[k - 1]! + best);
  }
  return result;
}

/** A post's control as the views show it: the post's author, the control's name, where it sits, and each view showing it. */
interface Control {
  user: string;
  name: string;
  top: number;
  shown: { view: number; id: number; y: number }[];
}

/**
 * The social-media posts' controls, each attributed to the author printed above it in its post (the
 * author line sits 30-50 px above the controls; posts are 62 px apart), over the start view and every
 * scrolled view, in page order.
 */
function postControls(views: readonly Observation[]): { controls: Control[]; offsets: number[]; printed: Printed[][] } {
  const printed = views.map(printedOf);
  const shift = offsets(printed);
  const authors: { user: string; top: number }[] = [];
  for (const [k, view] of printed.entries()) {
    for (const item of view) {
      const top = item.y + shift[k]!;
      if (item.text.startsWith('@') && !authors.some((a) => a.user === item.text && Math.abs(a.top - top) <= 2)) authors.push({ user: item.text, top });
    }
  }
  const controls: Control[] = [];
  for (const [k, view] of printed.entries()) {
    for (const item of view) {
      if (item.id === undefined || !item.label) continue;
      const top = item.y + shift[k]!;
      const author = authors.find((a) => top - a.top >= 30 && top - a.top <= 50);
      if (!author) continue;
      let control = controls.find((c) => c.name === item.label && Math.abs(c.top - top) <= 2);
      if (!control) controls.push((control = { user: author.user, name: item.label, top, shown: [] }));
      control.shown.push({ view: k, id: item.id, y: item.y });
    }
  }
  return { controls: controls.sort((a, b) => a.top - b.top), offsets: shift, printed };
}

/** The views showing the control, those showing it whole first (a control cut by the box's edge may slip out when hovered). */
function viewsShowing(control: Control): Control['shown'] {
  const whole = (at: Control['shown'][number]) => at.y >= 0 && at.y + 16 <= BOX_BOTTOM;
  return [...control.shown.filter(whole), ...control.shown.filter((at) => !whole(at))];
}

const scrollDown: OracleStep = { action: 'Scroll Down' };

/**
 * The steps from the start to view `to` of `views`: a Scroll Down each, and after every fourth in a row a
 * hover over an element of the view reached, which keeps a long run from reading as a stuck agent.
 */
function scrolls(views: readonly Observation[], to: number): OracleStep[] {
  const steps: OracleStep[] = [];
  for (let k = 1; k <= to; k++) {
    const first = views[k - 1]!.elements[0];
    if (k > 1 && (k - 1) % MAX_SAME_ACTIONS === 0 && first) steps.push({ action: 'Hover', target: matcherAt(views[k - 1]!, first.id)! });
    steps.push(scrollDown);
  }
  return steps;
}

/** social-media's "more" menu, in order; an item is 17 px tall, the first 17 px below the top of the "more" icon. */
const MENU = ['Share via DM', 'Copy link to Tweet', 'Embed Tweet', 'Mute', 'Block', 'Report'];
const MENU_ITEM_PX = 17;
/** social-media's scrolling box: 150 px tall at the top of the task area. */
const BOX_BOTTOM = 150;

/** social-media: "For the user @x, click on the "Action" button." An icon of the user's post, or an item of its "more" menu. */
const socialMedia: Solver = (intent, observation, scrolled) => {
  const ask = /^For the user (@\S+), click on the "(.+)" button\.$/.exec(intent);
  if (!ask) return undefined;
  const [, user, action] = ask as unknown as [string, string, string];
  const views = [observation, ...scrolled];
  const { controls, offsets: shift } = postControls(views);
  const mine = controls.filter((c) => c.user === user);
  const icon = mine.find((c) => c.name === action.toLowerCase());
  if (icon) {
    const at = viewsShowing(icon)[0]!;
    return [...scrolls(views, at.view), { action: 'Click', target: matcherAt(views[at.view]!, at.id)! }];
  }
  const item = MENU.indexOf(action);
  const more = mine.find((c) => c.name === 'more');
  if (item < 0 || !more) return undefined;
  const pick = (text: string): ElementMatcher => ({ tag: 'li', textIncludes: text });
  for (const at of viewsShowing(more)) {
    const centre = at.y + MENU_ITEM_PX * (item + 1) + MENU_ITEM_PX / 2;
    const open: OracleStep[] = [...scrolls(views, at.view), { action: 'Click', target: matcherAt(views[at.view]!, at.id)! }];
    if (centre < BOX_BOTTOM - 2) return [...open, { action: 'Click', target: pick(action) }];
    // One more Scroll Down once the menu is open: by two thirds of the box, or what is left below (the menu lengthens the list).
    const menuBottom = at.y + MENU_ITEM_PX * (MENU.length + 1);
    const left = Math.max(shift[shift.length - 1]! - shift[at.view]!, menuBottom - BOX_BOTTOM);
    const moved = Math.min(Math.round((BOX_BOTTOM * 2) / 3), left);
    if (centre - moved > 2 && centre - moved < BOX_BOTTOM - 2) return [...open, scrollDown, { action: 'Click', target: pick(action) }];
  }
  return undefined;
};

/**
 * social-media-all and -some: "Click the "Action" button on all posts (on N posts) by @x and then click
 * Submit.": each such icon once, in the first view that shows it, scrolling down to the Submit button below the posts.
 */
const socialMediaMany: Solver = (intent, observation, scrolled) => {
  const ask = /^Click the "(.+)" button on (all|\d+) posts? by (@\S+) and then click Submit\.$/.exec(intent);
  if (!ask) return undefined;
  const [, action, amount, user] = ask as unknown as [string, string, string, string];
  const views = [observation, ...scrolled];
  const wanted = postControls(views).controls.filter((c) => c.user === user && c.name === action.toLowerCase());
  const chosen = amount === 'all' ? wanted : wanted.slice(0, Number(amount));
  if (amount !== 'all' && chosen.length < Number(amount)) return undefined;
  const steps: OracleStep[] = [];
  let run = 0;
  for (const [k, view] of views.entries()) {
    if (k > 0) {
      const first = views[k - 1]!.elements[0];
      if (run === MAX_SAME_ACTIONS && first) steps.push({ action: 'Hover', target: matcherAt(views[k - 1]!, first.id)! });
      steps.push(scrollDown);
      run = steps.at(-2)?.action === 'Scroll Down' ? run + 1 : 1;
    }
    for (const control of chosen) {
      const at = viewsShowing(control)[0]!;
      if (at.view === k) steps.push({ action: 'Click', target: matcherAt(view, at.id)! });
    }
  }
  const button = views.at(-1)!.elements.find((e) => e.tag === 'button' && e.text === 'Submit');
  return button ? [...steps, { action: 'Click', target: matcherAt(views.at(-1)!, button.id)! }] : undefined;
};

export const WIDGET_SOLVERS: Readonly<Record<string, Solver>> = {
  'enter-date': enterAsWritten(/^Enter (\S+) as the date/),
  'enter-time': enterAsWritten(/^Enter (.+?) as the time/),
  'social-media': socialMedia,
  'social-media-all': socialMediaMany,
  'social-media-some': socialMediaMany,
  'use-spinner': useSpinner,
};
