/**
 * The featurizer: (state, candidate action) and states to fixed-width sparse rows of hashed features.
 * This comment is the one place the features are documented; bump FEATURIZER_VERSION whenever any of
 * them changes, because a checkpoint's weights only mean something under the version in its card.
 *
 * Hashing: a feature is a string (`family|part|part`). Its index is FNV-1a (32-bit, over UTF-16 code
 * units) followed by the murmur3 finaliser, reduced to [1, FEATURE_DIM); index 0 is padding. A row holds
 * at most `width` distinct indices; features are added in the order listed below, values of repeated
 * indices add up, and features past the width are dropped (the widths leave room: no row of the
 * embedded sites fills its width). Unused slots are padding (index 0, value 0), so a batch of n rows
 * is `[n, width]` indices + `[n, width]` values.
 *
 * Input: only what a trace keeps is read: the intent, the history's raw outputs (parsed), and the
 * observation's URL and simplified HTML, rebuilt into elements and a title (the first heading) by
 * htmlObservation.ts, so live pages and stored traces featurize alike.
 *
 * Words: tokens are lower-cased, stop words dropped and lightly stemmed (text.ts `terms`). The intent's
 * own words (names, products, quoted text) never appear lexically in a feature: they enter only through
 * generic match features (counts, shares, verbatim containment). Lexical features use the TASK TYPE (up
 * to 3 intent words written in lower case, e.g. "price", "add wish list"), the lower-case words right
 * next to a typed argument ("the photo-sorter project": what the argument is), and page words NOT in
 * the intent (UI vocabulary such as "reviews", "my account"). This is what lets a model trained on some
 * instances of a task carry over to other instances.
 *
 * Notation: I = the intent's terms; T = the task type (as one string) and its words; P = page words
 * not in I; K = the action kind; last = kind of the last parsed history action (`none` at round 0,
 * `invalid` when it did not parse); step = the round number (0, 1, 2, 3, 4-5, 6-9, 10+); place / leaf =
 * the first / last URL path segment (`#` when numeric, `*` when mostly intent terms, `~` when longer
 * than 24 characters, else itself); tc / uc = share of I among the title's / URL's words (quarters 0..4);
 * URL words are the path and query split at every non-alphanumeric character.
 *
 * Actor row, one per candidate (ACTOR_ROW_WIDTH):
 *   kind and context  k|K, kh|K|last, ks|K|step, rp|K (this exact action was taken before),
 *                     ku|K|u for 6 URL words in P, ki|K|t for t in T, tk|T|K|step, tp|T|K|place,
 *                     th|T|K|last;
 *   element actions   et|K|tag, er|K|role, ety|K|input type, ev|K (holds a value), rpe|K (acted on
 *                     before), epy|K|top/120 (capped 6), epx|K|left/320 (capped 3); matches with I:
 *                     emn|K|count (capped 3), emf|K = count / #element terms, emi|K = count / |I|,
 *                     te|T|K|count, ein|K (the element's text occurs verbatim in the intent), eall|K
 *                     (all its terms are in I); ew|K|e and tx|T|K|e for element terms e in P (up to 12
 *                     terms from text, full text, placeholder, title, data-label, value);
 *   argument actions  as|K|source, al|K|#tokens (capped 6), af|K (verbatim in the intent), ac|K =
 *   (Type, Search,    share of its terms in I, ap|K|b and an|K|a with b / a the intent word before /
 *   Select)           after it (a stop word or T word as itself, else `num` or `word`), apl|K|w and
 *                     anl|K|w with w that word itself (stemmed) when it is `word` written in lower
 *                     case outside the intent's quoted spans, ta|T|K|source|b, rpa|K (typed before),
 *                     ash|shape|e and acl|clause|e for 4 element terms (shape = answer shape of the
 *                     argument, clause = commas before it in the intent, capped 4), aom|K|#its terms
 *                     in the element's terms (capped 3); for a <select> option, aot|t|w crossing T
 *                     words with 3 option terms w not in I ("best-selling" with "month");
 *   exit              xs|source, xsh|shape, xc = share of message terms in I, xin (verbatim in the
 *                     intent), xlen|#tokens (capped 8), xi|t|shape for t in T, xl|l|t crossing 4 label
 *                     terms with T (label = the column header of a table cell, else the page segment
 *                     before the message), xlm|#label terms in I (capped 3), txs|T|source|shape|xlm,
 *                     txl|T|l, xw|w and txw|T|w|xlm with w where the message sits (cell: a table body
 *                     cell under a header; control: the text of an element; else text);
 *   last              ex|t|e crossing T words with 6 element terms in P.
 *
 * State row (critic: STATE_ROW_WIDTH):
 *   b, sn|step, hl|last, hk|kind per kind in the history, hinv|#unparsed rounds (capped 3), hrep (last
 *   two outputs identical), ha|#typed arguments found in the intent (capped 3), hq|share of the
 *   intent's quoted spans typed (quarters; when it has any), hs|k1|k2 for the last 4 pairs of
 *   consecutive action kinds, it|t for t in T, ic|share of I in the page text (quarters),
 *   ne|#elements (0, 1-9, 10-29, 30-99, 100+), tc|tc|place, uc|uc|place, cg|T|place|tc|uc,
 *   cgs|T|place|step, cgl|T|leaf|tc; then the page vocabulary: ut|u for 10 URL words in P, tt|w for 10
 *   title terms in P, su|step|u and sl|last|u for 3 URL words in P, xu|t|u crossing T with 6 URL words
 *   in P, xt|t|w crossing T with 6 title terms in P.
 *
 * ORM row (STATE_ROW_WIDTH): outcome features, then targets, then the state row without its page
 * vocabulary (no page words at all: see addPageVocabulary):
 *   oexit (the last action is exit), oshape|answer shape, oc|share of message terms in I (quarters),
 *   opage (message in the final page text), oin (message in the intent), oask|q|reply|opage with q = ask
 *   (the intent ends with "?") or do, reply = `none` without an exit, else the message for "", "n/a",
 *   "done", else its shape; olm|m and og|exit,page,m,tc and
 *   ogt|T|(same) with m = the most intent terms in a label of the message on the page (the segment
 *   before it, or the rest of its own segment; capped 3), ogu|T|place|uc|shape, ogl|T|leaf|shape;
 *   after an exit omsg|T|message for "", "n/a", "done" (else |shape) and omel|T|0/1 (the message is the
 *   text of a link or button on the page); oi|t|shape and ok|last|t for t in T, ol|l|t crossing 4 terms
 *   of that label with T; then what the final page shows of the task (E = the intent's named terms: its
 *   capitalised words and numbers after the first word, and its quoted spans; shares in quarters):
 *   oen|share of E in the page text (`none` when E is empty), oet|share of E among the title's and
 *   URL's words, oenx|ending|(both) with ending = the answer shape after an exit, else `none`;
 *   ott|how the title matches the intent (m below); onote|0/1 (a confirmation notice such as "You saved
 *   the page." or "Profile was successfully updated" is on the page), onotet|notice|typed|ending
 *   (typed: the episode typed some text), onotem|m of the notice.
 * Built `withoutTaskType` (the ORM trainer's second view of each trajectory), a row has no T: every
 * feature naming T or crossing its words is left out, the ORM targets' below included.
 *
 * ORM targets: what each element action acted on, as its page showed it (the history round's `target`,
 * actionTarget.ts: label, tag, rank among same-labelled twins, page URL, value). With K = the action's
 * kind, m = how the label matches the intent (0 none, 1 some terms, 2 all, 3 verbatim), v = the label
 * holds the intent's first T word (its verb: "Star", "Upvote"), uc = share of I among the words of the
 * page's URL (quarters), and up to 3 label terms u in P:
 *   per target        tm|K|m, tmu|K|m|uc, tv|K|uc (when v), tu|T|K|u, tul|T|u|leaf of its page,
 *                     tn|T|u|rank (capped 3; when it has twins); with an argument tf|K|f|a (f = the
 *                     label holds one of the 3 intent words before the argument, a = the argument's
 *                     match with the intent as m) and tfl|T|u|f;
 *   last two targets  tef|K|e, tefv|K|e|v, tefu|T|u|e with e what became of the element on the final page:
 *                     same (same rank, same value), changed (its value differs), flipped (gone, and a
 *                     label holding its label or held in it is there: Star / Unstar), gone;
 *   last target       tz|K|m|v|uc, tzu|T|u;
 *   episode           tcn|#targets with m > 0 (capped 3)|#targets (capped 3), ts|0/1 (after the last
 *                     typed argument, whether an element was clicked: a form sent).
 */
import type { Action, ObservedElement } from '../browser/contract';
import { formatAction } from '../browser/grammar';
import { targetLabel, type ActionTarget } from './actionTarget';
import type { Candidate } from './candidates';
import { canonicalObservation } from './htmlObservation';
import type { ModelState } from './state';
import { answerShape, isStopWord, pageTextSegments, pathSegments, quotedSpans, stem, terms, tokenize, urlTokens } from './text';

export const FEATURIZER_VERSION = 'webrl-hashed-features/10';
export const FEATURE_BITS = 18;
export const FEATURE_DIM = 2 ** FEATURE_BITS;
export const ACTOR_ROW_WIDTH = 128;
export const STATE_ROW_WIDTH = 256;

/** `[rows, width]` hashed indices (int32 here; int64 for onnxruntime) and their values. */
export interface FeatureBatch {
  rows: number;
  width: number;
  indices: Int32Array;
  values: Float32Array;
}

/** The featurizer facts a checkpoint card records. */
export interface FeaturizerSpec {
  version: string;
  dim: number;
  width: number;
}

export function featurizerSpec(width: number): FeaturizerSpec {
  return { version: FEATURIZER_VERSION, dim: FEATURE_DIM, width };
}

export function featureIndex(name: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) {
    hash ^= name.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  hash ^= hash >>> 16;
  return 1 + ((hash >>> 0) % (FEATURE_DIM - 1));
}

/** Collects one row's features up to its width. */
class RowBuilder {
  readonly indices: number[] = [];
  readonly values: number[] = [];
  private readonly slots = new Map<number, number>();

  /** `taskType` is undefined for a row built without the task type (see featurizeOutcomes). */
  constructor(
    private readonly width: number,
    private readonly taskType?: string,
  ) {}

  /** A feature crossed with the task type, `family|T|parts...`; left out when the row has no task type. */
  addTyped(family: string, ...parts: (string | number)[]): void {
    if (this.taskType !== undefined) this.add([family, this.taskType, ...parts].join('|'));
  }

  add(name: string, value = 1): void {
    if (value === 0) return;
    const index = featureIndex(name);
    const slot = this.slots.get(index);
    if (slot !== undefined) {
      this.values[slot]! += value;
      return;
    }
    if (this.indices.length >= this.width) return;
    this.slots.set(index, this.indices.length);
    this.indices.push(index);
    this.values.push(value);
  }
}

function toBatch(rows: readonly RowBuilder[], width: number): FeatureBatch {
  const indices = new Int32Array(rows.length * width);
  const values = new Float32Array(rows.length * width);
  rows.forEach((row, r) => {
    indices.set(row.indices, r * width);
    values.set(row.values, r * width);
  });
  return { rows: rows.length, width, indices, values };
}

/** Stacks batches of the same width into one. */
export function concatBatches(batches: readonly FeatureBatch[], width: number): FeatureBatch {
  const rows = batches.reduce((sum, batch) => sum + batch.rows, 0);
  const indices = new Int32Array(rows * width);
  const values = new Float32Array(rows * width);
  let offset = 0;
  for (const batch of batches) {
    if (batch.width !== width) throw new Error(`cannot stack a batch of width ${batch.width} into width ${width}`);
    indices.set(batch.indices, offset);
    values.set(batch.values, offset);
    offset += batch.indices.length;
  }
  return { rows, width, indices, values };
}

function stepBucket(step: number): string {
  if (step <= 3) return String(step);
  if (step <= 5) return '4-5';
  if (step <= 9) return '6-9';
  return '10+';
}

const share = (part: number, whole: number) => (whole === 0 ? 0 : part / whole);
const quarters = (fraction: number) => String(Math.min(4, Math.floor(fraction * 4)));

/** What every row of one state shares, computed once per state. */
interface StateContext {
  intentTerms: string[];
  intentSet: Set<string>;
  intentLower: string;
  intentWords: string[];
  /** Tokens of the intent's phrasing: words written in lower case, outside its quoted spans. */
  phrasingWords: Set<string>;
  /** The task type as one string (undefined when features are built without it), and its words. */
  taskType?: string;
  typeWords: string[];
  /** URL and title tokens that are not intent terms. */
  urlWords: string[];
  titleWords: string[];
  place: string;
  leaf: string;
  titleCoverage: string;
  urlCoverage: string;
  pageSegments: string[];
  pageLower: string;
  /** The trimmed, non-empty texts of the page's elements (links, buttons, fields). */
  elementTexts: Set<string>;
  lastKind: string;
  step: string;
  pastKeys: Set<string>;
  pastElements: Set<number>;
  pastArguments: Set<string>;
}

/** A word written capitalised or as a number: a name or a value, not the intent's phrasing. */
const isName = (word: string) => /^[\p{Lu}\p{N}]/u.test(word);

/**
 * A slot value written in lower case: a number, or an identifier joining words with "/", ".", "-" or "_"
 * ("f/music", "create-react-app", "top-2", "$42.00").
 */
const isIdentifier = (word: string) => /\p{N}|[\p{L}\p{N}][/._-][\p{L}\p{N}]/u.test(word);

/** The intent with its quoted spans blanked out: what it asks, without the values it asks about. */
const unquoted = (intent: string) => quotedSpans(intent).reduce((text, span) => text.replace(span, ' '), intent);

/**
 * Up to 3 terms of the intent's phrasing: lower-case words outside quotes, not identifiers ("price",
 * "add wish list"). Slot values must stay out: a task type per slot value ("search racing wheel") makes
 * every type-crossed feature a feature of one task, which the actor memorises instead of generalising.
 */
function taskTypeWords(intent: string): string[] {
  const words = unquoted(intent)
    .split(/\s+/)
    .filter((word, i) => (i === 0 || !isName(word)) && !isIdentifier(word));
  return terms(words.join(' ')).slice(0, 3);
}

/** The task type as one string, as type-crossed features carry it ("none" when the intent has no such words). */
export function taskType(intent: string): string {
  return taskTypeWords(intent).join(' ') || 'none';
}

/** Words the intent is phrased with, not about: lower case (names are capitalised), outside quotes. */
function phrasingWords(intent: string): Set<string> {
  return new Set(
    tokenize(
      unquoted(intent)
        .split(/\s+/)
        .filter((word) => !isName(word))
        .join(' '),
    ),
  );
}

/** A URL path segment as a feature: numbers as `#`, segments about the intent's words as `*`, else itself. */
function segmentClass(segment: string | undefined, intentSet: ReadonlySet<string>): string {
  if (segment === undefined) return 'root';
  if (/^\d+$/.test(segment)) return '#';
  const words = (segment.match(/[\p{L}\p{N}]+/gu) ?? []).map(stem);
  if (words.length > 0 && words.filter((word) => intentSet.has(word)).length * 2 >= words.length) return '*';
  return segment.length > 24 ? '~' : segment;
}

/** The share of the intent's terms among `tokens`, in quarters (0..4). */
function intentCoverage(intentTerms: readonly string[], tokens: readonly string[]): string {
  return quarters(share(intentTerms.filter((term) => tokens.includes(term)).length, intentTerms.length));
}

function stateContext(state: ModelState, withTaskType = true): StateContext {
  const observation = canonicalObservation(state.observation);
  const last = state.history[state.history.length - 1];
  const pastActions = state.history.flatMap((round) => (round.action ? [round.action] : []));
  const pageSegments = pageTextSegments(observation.html);
  const intentTerms = terms(state.intent);
  const intentSet = new Set(intentTerms);
  const titleTerms = terms(observation.title);
  const urls = [...new Set(urlTokens(observation.url).map(stem))];
  const segments = pathSegments(observation.url);
  const typeWords = withTaskType ? taskTypeWords(state.intent) : [];
  return {
    intentTerms,
    intentSet,
    intentLower: state.intent.toLowerCase(),
    intentWords: tokenize(state.intent),
    phrasingWords: phrasingWords(state.intent),
    taskType: withTaskType ? taskType(state.intent) : undefined,
    typeWords,
    urlWords: urls.filter((token) => !intentSet.has(token)),
    titleWords: titleTerms.filter((token) => !intentSet.has(token)),
    place: segmentClass(segments[0], intentSet),
    leaf: segmentClass(segments[segments.length - 1], intentSet),
    titleCoverage: intentCoverage(intentTerms, titleTerms),
    urlCoverage: intentCoverage(intentTerms, urls),
    pageSegments,
    pageLower: pageSegments.join(' ').toLowerCase(),
    elementTexts: new Set(observation.elements.map((element) => (element.fullText ?? element.text).trim()).filter(Boolean)),
    lastKind: last === undefined ? 'none' : (last.action?.kind ?? 'invalid'),
    step: stepBucket(state.history.length),
    pastKeys: new Set(pastActions.map(formatAction)),
    pastElements: new Set(pastActions.flatMap((action) => ('element' in action ? [action.element] : []))),
    pastArguments: new Set(pastActions.flatMap((action) => ('argument' in action ? [action.argument.toLowerCase()] : []))),
  };
}

function elementTerms(element: ObservedElement): string[] {
  const attributes = element.attributes;
  const sources = [element.text, element.fullText, attributes.placeholder, attributes.title, attributes['data-label'], element.value];
  const found = new Set<string>();
  for (const source of sources) {
    for (const term of terms(source ?? '')) {
      if (found.size >= 12) return [...found];
      found.add(term);
    }
  }
  return [...found];
}

/** The element's visible text, lower-cased, when it is long enough to mean something. */
function elementLabel(element: ObservedElement): string {
  const text = (element.fullText ?? element.text).trim().toLowerCase();
  return text.length >= 3 ? text : '';
}

/** An intent word next to an argument, as a feature: stop words and task-type words as themselves. */
function neighbourClass(word: string | undefined, context: StateContext, edge: string): string {
  if (word === undefined) return edge;
  if (isStopWord(word) || context.typeWords.includes(word)) return word;
  return /^\d/.test(word) ? 'num' : 'word';
}

/** Where `phrase` (tokens) first occurs in the intent's tokens, or -1. */
function positionInIntent(context: StateContext, phrase: readonly string[]): number {
  const words = context.intentWords;
  for (let i = 0; phrase.length > 0 && i + phrase.length <= words.length; i++) {
    if (phrase.every((token, j) => words[i + j] === token)) return i;
  }
  return -1;
}

/**
 * The words right before and after the first occurrence of `phrase` in the intent's tokens, as classes,
 * and as themselves (stemmed) where a `word` belongs to the intent's phrasing: "the photo-sorter
 * *project*" and "the settings *page*" differ only there.
 */
function neighbours(context: StateContext, phrase: readonly string[]): { before: string; after: string; literalBefore?: string; literalAfter?: string } {
  const words = context.intentWords;
  if (phrase.length === 0) return { before: 'none', after: 'none' };
  const at = positionInIntent(context, phrase);
  if (at < 0) return { before: 'absent', after: 'absent' };
  const side = (word: string | undefined, edge: string) => {
    const kind = neighbourClass(word, context, edge);
    return { kind, literal: kind === 'word' && context.phrasingWords.has(word!) ? stem(word!) : undefined };
  };
  const before = side(words[at - 1], 'start');
  const after = side(words[at + phrase.length], 'end');
  return { before: before.kind, after: after.kind, literalBefore: before.literal, literalAfter: after.literal };
}

/**
 * Where the answer stands on the page: among the segments holding `message`, the label (the segment
 * before it, or the rest of its own segment) sharing the most terms with the intent.
 */
function answerLabel(context: StateContext, message: string): { label?: string; matches: number } {
  let best: { label?: string; matches: number } = { matches: 0 };
  if (!message) return best;
  context.pageSegments.forEach((segment, i) => {
    if (!segment.includes(message)) return;
    for (const label of [context.pageSegments[i - 1], segment === message ? undefined : segment.replace(message, ' ')]) {
      if (label === undefined) continue;
      const matches = terms(label).filter((term) => context.intentSet.has(term)).length;
      if (best.label === undefined || matches > best.matches) best = { label, matches };
    }
  });
  return best;
}

/** Crosses a label's terms with the task type; returns how many of them are intent terms. */
function addAnswerLabel(row: RowBuilder, family: string, label: string | undefined, context: StateContext): number {
  const labelTerms = terms(label ?? '').slice(0, 4);
  for (const l of labelTerms) for (const t of context.typeWords) row.add(`${family}|${l}|${t}`);
  return labelTerms.filter((term) => context.intentSet.has(term)).length;
}

function actorRow(context: StateContext, candidate: Candidate): RowBuilder {
  const row = new RowBuilder(ACTOR_ROW_WIDTH, context.taskType);
  const action: Action = candidate.action;
  const k = action.kind;
  row.add(`k|${k}`);
  row.add(`kh|${k}|${context.lastKind}`);
  row.add(`ks|${k}|${context.step}`);
  if (context.pastKeys.has(candidate.key)) row.add(`rp|${k}`);
  for (const u of context.urlWords.slice(0, 6)) row.add(`ku|${k}|${u}`);
  for (const t of context.typeWords) row.add(`ki|${k}|${t}`);
  row.addTyped('tk', k, context.step);
  row.addTyped('tp', k, context.place);
  row.addTyped('th', k, context.lastKind);

  const element = candidate.element;
  const elementWords = element ? elementTerms(element) : [];
  const uiWords = elementWords.filter((term) => !context.intentSet.has(term));
  if (element) {
    row.add(`et|${k}|${element.tag}`);
    if (element.role) row.add(`er|${k}|${element.role}`);
    if (element.tag === 'input') row.add(`ety|${k}|${(element.attributes.type ?? 'text').toLowerCase()}`);
    if (element.value) row.add(`ev|${k}`);
    if (context.pastElements.has(element.id)) row.add(`rpe|${k}`);
    row.add(`epy|${k}|${Math.min(6, Math.max(0, Math.floor(element.bbox[1] / 120)))}`);
    row.add(`epx|${k}|${Math.min(3, Math.max(0, Math.floor(element.bbox[0] / 320)))}`);
    const matched = elementWords.length - uiWords.length;
    row.add(`emn|${k}|${Math.min(3, matched)}`);
    row.add(`emf|${k}`, share(matched, elementWords.length));
    row.add(`emi|${k}`, share(matched, context.intentTerms.length));
    row.addTyped('te', k, Math.min(3, matched));
    const label = elementLabel(element);
    if (label && context.intentLower.includes(label)) row.add(`ein|${k}`);
    if (elementWords.length > 0 && matched === elementWords.length) row.add(`eall|${k}`);
    for (const e of uiWords) {
      row.add(`ew|${k}|${e}`);
      row.addTyped('tx', k, e);
    }
  }

  if ('argument' in action) {
    const argument = action.argument;
    const argTokens = tokenize(argument);
    const argTerms = terms(argument);
    const shape = answerShape(argument);
    const position = context.intentLower.indexOf(argument.toLowerCase());
    const clause = Math.min(4, (context.intentLower.slice(0, Math.max(0, position)).match(/,/g) ?? []).length);
    row.add(`as|${k}|${candidate.source}`);
    row.add(`al|${k}|${Math.min(6, argTokens.length)}`);
    if (position >= 0) row.add(`af|${k}`);
    row.add(`ac|${k}`, share(argTerms.filter((term) => context.intentSet.has(term)).length, argTerms.length));
    const { before, after, literalBefore, literalAfter } = neighbours(context, argTokens);
    row.add(`ap|${k}|${before}`);
    row.add(`an|${k}|${after}`);
    row.addTyped('ta', k, candidate.source, before);
    if (literalBefore) row.add(`apl|${k}|${literalBefore}`);
    if (literalAfter) row.add(`anl|${k}|${literalAfter}`);
    if (context.pastArguments.has(argument.toLowerCase())) row.add(`rpa|${k}`);
    for (const e of elementWords.slice(0, 4)) {
      row.add(`ash|${shape}|${e}`);
      row.add(`acl|${clause}|${e}`);
    }
    row.add(`aom|${k}|${Math.min(3, argTerms.filter((term) => elementWords.includes(term)).length)}`);
    if (candidate.source === 'option') {
      for (const w of argTerms.filter((term) => !context.intentSet.has(term)).slice(0, 3)) for (const t of context.typeWords) row.add(`aot|${t}|${w}`);
    }
  }

  if (action.kind === 'exit') {
    const message = action.message;
    const shape = answerShape(message);
    const messageTerms = terms(message);
    row.add(`xs|${candidate.source}`);
    row.add(`xsh|${shape}`);
    row.add('xc', share(messageTerms.filter((term) => context.intentSet.has(term)).length, messageTerms.length));
    if (message && context.intentLower.includes(message.toLowerCase())) row.add('xin');
    row.add(`xlen|${Math.min(8, tokenize(message).length)}`);
    for (const t of context.typeWords) row.add(`xi|${t}|${shape}`);
    const labelMatches = Math.min(3, addAnswerLabel(row, 'xl', candidate.label, context));
    row.add(`xlm|${labelMatches}`);
    row.addTyped('txs', candidate.source, shape, labelMatches);
    // A table cell is data; the text of a link or button is usually navigation.
    const place = candidate.cell ? 'cell' : context.elementTexts.has(message.trim()) ? 'control' : 'text';
    row.add(`xw|${place}`);
    row.addTyped('txw', place, labelMatches);
    for (const l of terms(candidate.label ?? '').slice(0, 4)) row.addTyped('txl', l);
  }

  for (const t of context.typeWords) for (const e of uiWords.slice(0, 6)) row.add(`ex|${t}|${e}`);
  return row;
}

/** One row per candidate of one state. */
export function featurizeCandidates(state: ModelState, candidates: readonly Candidate[]): FeatureBatch {
  const context = stateContext(state);
  return toBatch(
    candidates.map((candidate) => actorRow(context, candidate)),
    ACTOR_ROW_WIDTH,
  );
}

function addStateFeatures(row: RowBuilder, state: ModelState, context: StateContext): void {
  row.add('b');
  row.add(`sn|${context.step}`);
  row.add(`hl|${context.lastKind}`);
  for (const kind of new Set(state.history.map((round) => round.action?.kind ?? 'invalid'))) row.add(`hk|${kind}`);
  row.add(`hinv|${Math.min(3, state.history.filter((round) => !round.action).length)}`);
  const responses = state.history.map((round) => round.response);
  if (responses.length >= 2 && responses[responses.length - 1] === responses[responses.length - 2]) row.add('hrep');
  const typedInIntent = [...context.pastArguments].filter((argument) => context.intentLower.includes(argument)).length;
  row.add(`ha|${Math.min(3, typedInIntent)}`);
  const quoted = quotedSpans(state.intent).map((span) => span.toLowerCase());
  if (quoted.length > 0) row.add(`hq|${quarters(share(quoted.filter((span) => context.pastArguments.has(span)).length, quoted.length))}`);
  const kinds = state.history.map((round) => round.action?.kind ?? 'invalid');
  kinds.slice(-4).forEach((kind, i, recent) => row.add(`hs|${recent[i - 1] ?? 'start'}|${kind}`));
  for (const t of context.typeWords) row.add(`it|${t}`);
  const onPage = context.intentTerms.filter((term) => context.pageLower.includes(term));
  row.add(`ic|${quarters(share(onPage.length, context.intentTerms.length))}`);
  const n = canonicalObservation(state.observation).elements.length;
  row.add(`ne|${n === 0 ? '0' : n < 10 ? '1-9' : n < 30 ? '10-29' : n < 100 ? '30-99' : '100+'}`);
  row.add(`tc|${context.titleCoverage}|${context.place}`);
  row.add(`uc|${context.urlCoverage}|${context.place}`);
  row.addTyped('cg', context.place, context.titleCoverage, context.urlCoverage);
  row.addTyped('cgs', context.place, context.step);
  row.addTyped('cgl', context.leaf, context.titleCoverage);
}

/**
 * The page's own vocabulary: URL and title words not in the intent, alone and crossed. The critic reads
 * them; the ORM does not, because on its few hundred trajectories they let it learn which pages its
 * training tasks ended on instead of what a finished task looks like (bench:models, 8 training seeds).
 */
function addPageVocabulary(row: RowBuilder, context: StateContext): void {
  for (const u of context.urlWords.slice(0, 10)) row.add(`ut|${u}`);
  for (const w of context.titleWords.slice(0, 10)) row.add(`tt|${w}`);
  for (const u of context.urlWords.slice(0, 3)) {
    row.add(`su|${context.step}|${u}`);
    row.add(`sl|${context.lastKind}|${u}`);
  }
  for (const t of context.typeWords) for (const u of context.urlWords.slice(0, 6)) row.add(`xu|${t}|${u}`);
  for (const t of context.typeWords) for (const w of context.titleWords.slice(0, 6)) row.add(`xt|${t}|${w}`);
}

/** One row per state: the critic's input. */
export function featurizeStates(states: readonly ModelState[]): FeatureBatch {
  return toBatch(
    states.map((state) => {
      const context = stateContext(state);
      const row = new RowBuilder(STATE_ROW_WIDTH, context.taskType);
      addStateFeatures(row, state, context);
      addPageVocabulary(row, context);
      return row;
    }),
    STATE_ROW_WIDTH,
  );
}

function ormRow(state: ModelState, withTaskType: boolean): RowBuilder {
  const context = stateContext(state, withTaskType);
  const row = new RowBuilder(STATE_ROW_WIDTH, context.taskType);
  const last = state.history[state.history.length - 1]?.action;
  const exited = last?.kind === 'exit';
  const message = last?.kind === 'exit' ? last.message : '';
  const shape = answerShape(message);
  if (exited) row.add('oexit');
  row.add(`oshape|${shape}`);
  const messageTerms = terms(message);
  row.add(`oc|${quarters(share(messageTerms.filter((term) => context.intentSet.has(term)).length, messageTerms.length))}`);
  const onPage = message !== '' && context.pageLower.includes(message.toLowerCase());
  if (onPage) row.add('opage');
  if (message && context.intentLower.includes(message.toLowerCase())) row.add('oin');
  // Whether the reply fits the request: a question ("Who posted ...?") wants an answer, not "Done".
  const asks = /\?\s*$/.test(state.intent) ? 'ask' : 'do';
  const reply = exited ? (FIXED_ANSWERS.has(message.trim().toLowerCase()) ? message.trim().toLowerCase() : shape) : 'none';
  row.add(`oask|${asks}|${reply}|${onPage ? 1 : 0}`);
  const { label, matches } = answerLabel(context, message);
  const signal = `${exited ? 1 : 0}${onPage ? 1 : 0}${Math.min(3, matches)}${context.titleCoverage}`;
  row.add(`olm|${Math.min(3, matches)}`);
  row.add(`og|${signal}`);
  row.addTyped('ogt', signal);
  row.addTyped('ogu', context.place, context.urlCoverage, shape);
  row.addTyped('ogl', context.leaf, exited ? shape : 'none');
  if (exited) {
    row.addTyped('omsg', reply);
    // Answers that are the text of a link or button are usually navigation, not data.
    const chrome = context.elementTexts.has(message.trim());
    row.addTyped('omel', chrome ? 1 : 0);
  }
  for (const t of context.typeWords) {
    row.add(`oi|${t}|${shape}`);
    row.add(`ok|${context.lastKind}|${t}`);
  }
  addAnswerLabel(row, 'ol', label, context);
  addFinalPageEvidence(row, state, context, exited ? shape : 'none');
  addTargetFeatures(row, state, context);
  addStateFeatures(row, state, context);
  return row;
}

/**
 * The notice a web app shows once a change is stored ("You saved the page.", "Profile was successfully
 * updated", "Thanks for the report!"): generic UI English, unlike the page vocabulary the ORM leaves out.
 */
const CONFIRMATION =
  /\b(?:was|were|has been|have been) (?:successfully )?(?:saved|updated|added|created|submitted|posted|removed|deleted|sent)\b|^You (?:saved|submitted|added|updated|removed|deleted|posted)\b|^Thanks for\b|^Thank you\b|^We have (?:saved|removed)\b/i;

/**
 * What the final page shows of the task, whatever its type: the intent's named things (its capitalised
 * words and numbers after the first word, and its quoted spans) on the page and in its title or URL, how
 * the title matches the intent, and a confirmation notice. These carry over to task types the ORM never
 * saw, where its type-crossed features have no weights (bench:models: "Oral Care" is not on the Cycling
 * page the agent stopped at; the order page shows another date than the one asked about).
 */
function addFinalPageEvidence(row: RowBuilder, state: ModelState, context: StateContext, ending: string): void {
  const observation = canonicalObservation(state.observation);
  const named = state.intent.split(/\s+/).filter((word, i) => i > 0 && isName(word));
  const entities = terms([...named, ...quotedSpans(state.intent)].join(' '));
  if (entities.length > 0) {
    const onPage = quarters(share(entities.filter((term) => context.pageLower.includes(term)).length, entities.length));
    const inTitleOrUrl = intentCoverage(entities, terms(`${observation.title} ${urlTokens(observation.url).join(' ')}`));
    row.add(`oen|${onPage}`);
    row.add(`oet|${inTitleOrUrl}`);
    row.add(`oenx|${ending}|${onPage}|${inTitleOrUrl}`);
  } else row.add('oen|none');
  row.add(`ott|${intentMatch(observation.title, context)}`);
  const notice = context.pageSegments.find((segment) => CONFIRMATION.test(segment));
  const typed = state.history.some((round) => round.action?.kind === 'Type');
  row.add(`onote|${notice ? 1 : 0}`);
  row.add(`onotet|${notice ? 1 : 0}|${typed ? 1 : 0}|${ending}`);
  if (notice) row.add(`onotem|${intentMatch(notice, context)}`);
}

/** Whether a phrase's words match the intent: 0 none, 1 some, 2 all its terms, 3 verbatim. */
function intentMatch(phrase: string, context: StateContext): number {
  const phraseTerms = terms(phrase);
  const matched = phraseTerms.filter((term) => context.intentSet.has(term)).length;
  if (phrase.trim().length >= 3 && context.intentLower.includes(phrase.trim().toLowerCase())) return 3;
  if (phraseTerms.length > 0 && matched === phraseTerms.length) return 2;
  return matched > 0 ? 1 : 0;
}

/** The intent words right before `phrase` (up to 3), stemmed: what names the field an argument belongs in. */
function wordsBefore(context: StateContext, phrase: string): string[] {
  const at = positionInIntent(context, tokenize(phrase));
  return at < 0 ? [] : context.intentWords.slice(Math.max(0, at - 3), at).map(stem);
}

/**
 * What became of an acted-on element on the final page: `same` (still there, same value), `changed` (its
 * value differs: a cast vote), `flipped` (gone, and an element whose label holds its label or is held in
 * it took its place: Star / Unstar), `gone`.
 */
function targetEffect(target: ActionTarget, finalElements: readonly ObservedElement[]): string {
  const twins = finalElements.filter((element) => element.tag === target.tag && targetLabel(element) === target.label);
  const twin = twins[target.nth - 1];
  if (twin) return twin.value === target.value ? 'same' : 'changed';
  const label = target.label.toLowerCase();
  if (label.length >= 3) {
    const flipped = finalElements.some((element) => {
      const other = targetLabel(element).toLowerCase();
      return other !== label && other.length >= 3 && (other.includes(label) || label.includes(other));
    });
    if (flipped) return 'flipped';
  }
  return 'gone';
}

/** What the episode's element actions acted on (rounds with a target; see the ORM row above). */
function addTargetFeatures(row: RowBuilder, state: ModelState, context: StateContext): void {
  const verb = context.typeWords[0];
  const acted = state.history.flatMap((round) =>
    round.target && round.action && 'element' in round.action ? [{ action: round.action, target: round.target }] : [],
  );
  const finalElements = canonicalObservation(state.observation).elements;
  let typedAt = -1;
  let clickedAfterTyping = false;
  let matching = 0;
  acted.forEach(({ action, target }, i) => {
    const k = action.kind;
    const labelTerms = terms(target.label);
    const ui = labelTerms.filter((term) => !context.intentSet.has(term)).slice(0, 3);
    const match = intentMatch(target.label, context);
    if (match > 0) matching++;
    const segments = pathSegments(target.url);
    const leaf = segmentClass(segments[segments.length - 1], context.intentSet);
    const urlCoverage = intentCoverage(context.intentTerms, urlTokens(target.url).map(stem));
    const isVerb = verb !== undefined && labelTerms.includes(verb);
    row.add(`tm|${k}|${match}`);
    row.add(`tmu|${k}|${match}|${urlCoverage}`);
    if (isVerb) row.add(`tv|${k}|${urlCoverage}`);
    for (const u of ui) {
      row.addTyped('tu', k, u);
      row.addTyped('tul', u, leaf);
      if (target.of > 1) row.addTyped('tn', u, Math.min(3, target.nth));
    }
    if ('argument' in action) {
      const before = wordsBefore(context, action.argument);
      const named = before.some((word) => labelTerms.includes(word));
      row.add(`tf|${k}|${named ? 1 : 0}|${intentMatch(action.argument, context)}`);
      for (const u of ui) row.addTyped('tfl', u, named ? 1 : 0);
      typedAt = i;
    } else if (typedAt >= 0) clickedAfterTyping = true;
    if (i >= acted.length - 2) {
      const effect = targetEffect(target, finalElements);
      row.add(`tef|${k}|${effect}`);
      row.add(`tefv|${k}|${effect}|${isVerb ? 1 : 0}`);
      for (const u of ui) row.addTyped('tefu', u, effect);
    }
    if (i === acted.length - 1) {
      row.add(`tz|${k}|${match}|${isVerb ? 1 : 0}|${urlCoverage}`);
      for (const u of ui) row.addTyped('tzu', u);
    }
  });
  row.add(`tcn|${Math.min(3, matching)}|${Math.min(3, acted.length)}`);
  if (typedAt >= 0) row.add(`ts|${clickedAfterTyping ? 1 : 0}`);
}

/** Answers that say nothing about the page: the ORM sees them as themselves. */
const FIXED_ANSWERS = new Set(['', 'n/a', 'done']);

/**
 * One row per finished episode (its outcome state, models/orm.ts): the ORM's input. `withoutTaskType`
 * builds the rows as if the intent had no task type: every feature crossed with it is left out, and only
 * what any task shows remains (the ORM trainer's second view of each trajectory, models/train/prepare.ts).
 */
export function featurizeOutcomes(states: readonly ModelState[], options: { withoutTaskType?: boolean } = {}): FeatureBatch {
  return toBatch(
    states.map((state) => ormRow(state, !options.withoutTaskType)),
    STATE_ROW_WIDTH,
  );
}
