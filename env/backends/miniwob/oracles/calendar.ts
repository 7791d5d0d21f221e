/**
 * daily-calendar: an event is drawn by pressing on its first half-hour slot, moving over its last one and
 * releasing on the drawn "New event" box, then named. The grammar has no drag, but its steps make one:
 * Click presses (and releases where nothing listens), Hover moves, Click on the drawn box releases.
 */
import type { Observation, ObservedElement } from '../../../../browser/contract';
import type { SolvedStep } from '../../../../browser/policies/oracle';
import { clickOn, elementsOf, hoverOn, quotedIn, scrollAgain, stepByStep, typeInto, withText, type SolverInput } from './page';

/** The slot height the page draws (px); an hour is two slots under one label. */
const SLOT_PX = 20;

interface EventGoal {
  name: string;
  /** Half-hour slots the event covers. */
  slots: number;
  /** The window's first and (exclusive) last half-hour of the day. */
  from: number;
  to: number;
}

const HOURS: Record<string, number> = { '8AM': 8, '12PM': 12, '4PM': 16, '8PM': 20 };

function eventGoal(intent: string): EventGoal | undefined {
  const match = /^Create a (30 mins|60 mins|90 mins|0\.5 hours|1 hour|1\.5 hours) event named "[^"]*", between (\w+) and (\w+)\.$/.exec(intent);
  const name = quotedIn(intent)[0];
  const [from, to] = [HOURS[match?.[2] ?? ''], HOURS[match?.[3] ?? '']];
  if (!match || name === undefined || from === undefined || to === undefined) return undefined;
  const minutes = /hour/.test(match[1]!) ? Number.parseFloat(match[1]!) * 60 : Number.parseInt(match[1]!, 10);
  return { name, slots: minutes / 30, from: from * 2, to: to * 2 };
}

/** The hour labels the page shows now ("4pm"), as half-hours of the day, with the top of their row. */
function shownHours(observation: Observation): Map<number, number> {
  const rows = new Map<number, number>();
  for (const [, top, label] of observation.html.matchAll(/<span data-bbox="\d+,(-?\d+),\d+,\d+"> (\d{1,2}(?:am|pm)) <\/span>/g)) {
    const hour = (Number.parseInt(label!, 10) % 12) + (label!.endsWith('pm') ? 12 : 0);
    rows.set(hour * 2, Number(top));
  }
  return rows;
}

const overlaps = (a: ObservedElement['bbox'], b: ObservedElement['bbox']) => a[1] < b[1] + b[3] && b[1] < a[1] + a[3];

/**
 * The slots of the first place in the window where the event fits on screen, clear of the events drawn
 * there already (a press on one of them would land on the event): its first and last slot elements.
 */
function freePlace(goal: EventGoal, observation: Observation): { start: number; first: ObservedElement; last: ObservedElement } | undefined {
  const hours = shownHours(observation);
  const divs = elementsOf(observation, 'div');
  const events = divs.filter((d) => d.text !== '');
  const slotAt = (halfHour: number) => {
    const rowTop = hours.get(halfHour - (halfHour % 2));
    if (rowTop === undefined) return undefined;
    const top = rowTop + (halfHour % 2) * SLOT_PX;
    const slot = divs.find((d) => d.text === '' && Math.abs(d.bbox[1] - top) <= 2);
    return slot && !events.some((e) => overlaps(e.bbox, slot.bbox)) ? slot : undefined;
  };
  for (let first = goal.from; first + goal.slots <= goal.to; first++) {
    const slots = Array.from({ length: goal.slots }, (_, i) => slotAt(first + i));
    if (slots.every((s) => s !== undefined)) return { start: first, first: slots[0]!, last: slots.at(-1)! };
  }
  return undefined;
}

function drawEvent(goal: EventGoal, input: SolverInput): SolvedStep | undefined {
  const { observation, memory, history } = input;
  const name = elementsOf(observation, 'input').find((e) => e.attributes.placeholder === 'Event name');
  if (name && name.value !== goal.name) return { step: typeInto(observation, name, goal.name) };
  const create = withText(observation, 'button', 'Create');
  if (name && create) return { step: clickOn(observation, create), last: true };
  const drawn = elementsOf(observation, 'div').find((d) => d.text === 'New event');
  if (drawn) return { step: clickOn(observation, drawn) };
  const place = freePlace(goal, observation);
  if (!place) return { step: scrollAgain(observation, 'Scroll Down', history) };
  const { start, first, last } = place;
  // Pressed on the first slot last round: move over the last one, which draws the box. A one-slot event is
  // drawn by moving onto its slot from elsewhere: first over the slot above it, which draws nothing.
  if (memory.pressed === start) {
    if (goal.slots === 1 && !memory.movedAway) {
      memory.movedAway = true;
      const above = elementsOf(observation, 'div').find((d) => d.text === '' && Math.abs(d.bbox[1] + d.bbox[3] - first.bbox[1]) <= 2);
      if (above) return { step: hoverOn(observation, above) };
    }
    return { step: hoverOn(observation, last) };
  }
  memory.pressed = start;
  return { step: clickOn(observation, first) };
}

export const CALENDAR_PLANNERS = { 'daily-calendar': stepByStep('daily-calendar', eventGoal, drawEvent) };
