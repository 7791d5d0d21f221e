/**
 * The actor's action space for one state: a finite list of candidate actions built from the
 * observation and the intent. The local actor is a softmax over exactly this list, so an action outside
 * it has no probability mass (see `Actor.logProbs` for the floor it gets).
 *
 *   every element          Click, Hover
 *   text fields            Type and Search with each intent phrase (text.ts `intentPhrases`)
 *   textareas              Type with each comma list of the intent, one item per line (text.ts `intentLists`)
 *   date fields            Type with each date of the intent in the field's placeholder format
 *                          (dates.ts; a month gives its first and last day)
 *   <select> elements      Select Dropdown Option with each of its options
 *   always                 Scroll Up, Scroll Down, Press Enter, Go Backward, Go Forward
 *   always                 exit(message) with "", "N/A", "Done", the page's text segments and the numbers
 *                          inside them, then element texts
 *
 * Order is deterministic (elements in id order, then page-level actions, then exits); duplicates (by
 * their grammar string) keep their first occurrence.
 */
import type { Action, ObservedElement, Observation } from '../browser/contract';
import { formatAction } from '../browser/grammar';
import { dateFormat, formatDate, intentDates } from './dates';
import { canonicalObservation } from './htmlObservation';
import { intentLists, intentPhrases, numbersIn, pageSegments, type PhraseSource } from './text';

/** Where an argument or exit message came from; a feature of the candidate. */
export type CandidateSource =
  PhraseSource | 'lines' | 'date' | 'month-start' | 'month-end' | 'option' | 'fixed' | 'element-text' | 'page-text' | 'page-number' | 'none';

export interface Candidate {
  action: Action;
  /** `formatAction(action)`: the identity of the candidate. */
  key: string;
  source: CandidateSource;
  /** The element the action targets, if any. */
  element?: ObservedElement;
  /**
   * For exit messages from the page, their label: the column header of a table cell, else the segment
   * before the message; for a number inside a longer segment, that segment.
   */
  label?: string;
  /** For exit messages from the page: the message is a table body cell under a column header. */
  cell?: boolean;
}

export const CANDIDATE_LIMITS = {
  /** Longest intent n-gram offered as a typed argument. */
  maxNgram: 5,
  /** Longest phrase after a trigger word ("for", "titled", ...). */
  maxPhraseWords: 8,
  /** Typed arguments per text field. */
  maxArguments: 48,
  /** Exit messages per state. */
  maxExitMessages: 80,
  /** Longest page text offered as an exit message, in characters. */
  maxMessageLength: 120,
} as const;

const TEXT_INPUT_TYPES = new Set(['', 'text', 'search', 'email', 'url', 'tel', 'number', 'password']);
const TEXT_ROLES = new Set(['textbox', 'searchbox', 'combobox']);
const PAGE_ACTIONS = ['Scroll Up', 'Scroll Down', 'Press Enter', 'Go Backward', 'Go Forward'] as const;
/** Answers no page shows: none, "not applicable", and the customary one after carrying out a task. */
const FIXED_MESSAGES = ['', 'N/A', 'Done'];

export function isTextField(element: ObservedElement): boolean {
  if (element.tag === 'textarea') return true;
  if (element.tag === 'input') return TEXT_INPUT_TYPES.has((element.attributes.type ?? '').toLowerCase());
  const editable = element.attributes.contenteditable;
  return (editable !== undefined && editable !== 'false') || TEXT_ROLES.has(element.role ?? '');
}

/** The candidates of a state; the observation is read through `canonicalObservation` (its URL and HTML). */
export function buildCandidates(intent: string, live: Observation): Candidate[] {
  const observation = canonicalObservation(live);
  const candidates: Candidate[] = [];
  const seen = new Set<string>();
  const add = (action: Action, source: CandidateSource, extra: Partial<Candidate> = {}) => {
    const key = formatAction(action);
    if (seen.has(key)) return;
    seen.add(key);
    candidates.push({ action, key, source, ...extra });
  };
  const phrases = intentPhrases(intent, {
    maxNgram: CANDIDATE_LIMITS.maxNgram,
    maxPhraseWords: CANDIDATE_LIMITS.maxPhraseWords,
    limit: CANDIDATE_LIMITS.maxArguments,
  });
  const lists = intentLists(intent).map((items) => items.join('\n'));
  const dates = intentDates(intent);
  const elements = [...observation.elements].sort((a, b) => a.id - b.id);
  for (const element of elements) {
    const id = element.id;
    add({ kind: 'Click', element: id }, 'none', { element });
    add({ kind: 'Hover', element: id }, 'none', { element });
    if (isTextField(element)) {
      for (const phrase of phrases) {
        add({ kind: 'Type', element: id, argument: phrase.text }, phrase.source, { element });
        add({ kind: 'Search', element: id, argument: phrase.text }, phrase.source, { element });
      }
      if (element.tag === 'textarea') {
        for (const lines of lists) add({ kind: 'Type', element: id, argument: lines }, 'lines', { element });
      }
      const format = dateFormat(element.attributes.placeholder ?? '');
      if (format) {
        for (const { date, part } of dates) add({ kind: 'Type', element: id, argument: formatDate(date, format) }, part === 'day' ? 'date' : part, { element });
      }
    }
    for (const option of element.options ?? []) {
      if (option.trim()) add({ kind: 'Select Dropdown Option', element: id, argument: option }, 'option', { element });
    }
  }
  for (const kind of PAGE_ACTIONS) add({ kind }, 'none');
  for (const { text, source, ...extra } of exitMessages(observation)) add({ kind: 'exit', message: text }, source, extra);
  return candidates;
}

interface ExitMessage {
  text: string;
  source: CandidateSource;
  label?: string;
  cell?: boolean;
}

function exitMessages(observation: Observation): ExitMessage[] {
  const messages: ExitMessage[] = FIXED_MESSAGES.map((text) => ({ text, source: 'fixed' }));
  const seen = new Set(FIXED_MESSAGES);
  const add = (message: ExitMessage) => {
    if (message.text.length > CANDIDATE_LIMITS.maxMessageLength || seen.has(message.text)) return;
    if (messages.length >= CANDIDATE_LIMITS.maxExitMessages) return;
    seen.add(message.text);
    messages.push(message);
  };
  const segments = pageSegments(observation.html);
  segments.forEach(({ text, column }, i) => {
    const label = column ?? segments[i - 1]?.text;
    const whole = { ...(label ? { label } : {}), ...(column ? { cell: true } : {}) };
    add({ text, source: 'page-text', ...whole });
    for (const number of numbersIn(text))
      add(number === text ? { text: number, source: 'page-number', ...whole } : { text: number, source: 'page-number', label: text });
  });
  for (const element of observation.elements) {
    const text = (element.fullText ?? element.text).trim();
    if (text) add({ text, source: 'element-text' });
  }
  return messages;
}
