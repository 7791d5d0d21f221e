/**
 * What an action acted on, as the page showed it at that moment. Element ids are numbers of one page,
 * so once the page has changed `element="13"` says nothing; the ORM (its features and the remote prompt)
 * reads these instead, to tell which post got the vote, which field got which text, which sort order
 * the page was in.
 */
import { z } from 'zod';
import type { Action, Observation, ObservedElement } from '../browser/contract';
import { canonicalObservation } from './htmlObservation';

export interface ActionTarget {
  tag: string;
  /** The element's visible text, or its title / data-label / placeholder / aria-label / name when the text has no letter or digit (80 characters at most). */
  label: string;
  /** 1-based rank among the page's elements with the same tag and label (in id order, which is document order), and how many there are. */
  nth: number;
  of: number;
  /** The page it was on. */
  url: string;
  /** Its value attribute then, when it had one (a vote button's value flips once the vote is cast). */
  value?: string;
}

export const actionTargetSchema = z.object({
  tag: z.string(),
  label: z.string(),
  nth: z.number().int().min(1),
  of: z.number().int().min(1),
  url: z.string(),
  value: z.string().optional(),
});

const LABEL_CHARS = 80;
const MEANINGFUL = /[\p{L}\p{N}]/u;

export function targetLabel(element: ObservedElement): string {
  const text = (element.fullText ?? element.text).trim();
  if (MEANINGFUL.test(text)) return text.slice(0, LABEL_CHARS);
  const { attributes } = element;
  const named = [attributes.title, attributes['data-label'], attributes.placeholder, attributes['aria-label'], attributes.name].find(
    (value) => value && MEANINGFUL.test(value),
  );
  return (named ?? text).trim().slice(0, LABEL_CHARS);
}

/** The target of an element action on the page it was chosen on; undefined for other actions and for ids the page does not have. */
export function describeTarget(action: Action | null, observation: Observation): ActionTarget | undefined {
  if (!action || !('element' in action)) return undefined;
  const elements = canonicalObservation(observation).elements;
  const element = elements.find((candidate) => candidate.id === action.element);
  if (!element) return undefined;
  const label = targetLabel(element);
  const twins = elements.filter((other) => other.tag === element.tag && targetLabel(other) === label);
  const target: ActionTarget = { tag: element.tag, label, nth: twins.indexOf(element) + 1, of: twins.length, url: observation.url };
  if (element.value !== undefined) target.value = element.value;
  return target;
}

/** The target as one line for a prompt: `[button "Upvote" 1 of 20 on /f/books/new]`. */
export function targetText(target: ActionTarget): string {
  const rank = target.of > 1 ? ` ${target.nth} of ${target.of}` : '';
  let where = target.url;
  try {
    const url = new URL(target.url);
    where = url.pathname + url.search;
  } catch {
    // Not an absolute URL: print it as it is.
  }
  return `[${target.tag} ${JSON.stringify(target.label)}${rank} on ${where}]`;
}
