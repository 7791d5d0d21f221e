/**
 * Text helpers shared by the candidate generator and the featurizer: tokens, stop words, the phrases of
 * an intent that can become typed arguments, and the visible text segments of a simplified-HTML
 * observation that can become exit answers. All pure and deterministic.
 */

/** Lower-cased word tokens; numbers keep their inner separators ("23.50", "1,200"), "$" and "%" are dropped. */
export function tokenize(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+(?:[.,'’_-][\p{L}\p{N}]+)*/gu) ?? [];
}

const STOP_WORDS = new Set(
  (
    'a an the and or but of to in on at by for with from into onto about as is are was were be been being ' +
    'this that these those it its i me my we our you your he she they them their his her what which who whom ' +
    'whose when where why how do does did done can could should would will shall may might must please ' +
    'there here than then so such not no yes all any each every some me up down out over under again ' +
    'tell show give find get let make s t'
  ).split(' '),
);

export function isStopWord(token: string): boolean {
  return STOP_WORDS.has(token);
}

/** The tokens of a text that carry meaning (stop words removed), in order, without repeats. */
export function contentTokens(text: string): string[] {
  return [...new Set(tokenize(text).filter((token) => !STOP_WORDS.has(token)))];
}

/**
 * A light, conservative stemmer so "reviews" meets "review" and "highest" meets "high": plural -s / -es
 * (after a sibilant) / -ies, superlative -est and -ing, when at least 3 letters remain.
 */
export function stem(token: string): string {
  if (token.length >= 5 && token.endsWith('ies')) return `${token.slice(0, -3)}y`;
  if (token.length >= 5 && /(ss|x|z|ch|sh)es$/.test(token)) return token.slice(0, -2);
  if (token.length >= 4 && token.endsWith('s') && !token.endsWith('ss') && !token.endsWith('us')) return token.slice(0, -1);
  if (token.length >= 6 && (token.endsWith('est') || token.endsWith('ing'))) return token.slice(0, -3);
  return token;
}

/** Stemmed content tokens, in order, without repeats: what the featurizer matches on. */
export function terms(text: string): string[] {
  return [...new Set(contentTokens(text).map(stem))];
}

/** Strings quoted in the text: "...", “...”, and '...' when the quotes stand at word boundaries. */
export function quotedSpans(text: string): string[] {
  return quotedRanges(text).map((range) => range.span);
}

/** Where the quoted spans of `quotedSpans` stand in the text, quotes included. */
function quotedRanges(text: string): { span: string; start: number; end: number }[] {
  const ranges: { span: string; start: number; end: number }[] = [];
  for (const match of text.matchAll(/"([^"]+)"|“([^”]+)”|(?<![\p{L}\p{N}])'([^']+)'(?![\p{L}\p{N}])/gu)) {
    const span = (match[1] ?? match[2] ?? match[3] ?? '').trim();
    if (span) ranges.push({ span, start: match.index, end: match.index + match[0].length });
  }
  return ranges;
}

/** Where an intent phrase came from; the featurizer tells the sources apart. */
export type PhraseSource = 'quoted' | 'trigger' | 'run' | 'name' | 'ngram';

export interface IntentPhrase {
  text: string;
  source: PhraseSource;
}

/** A word of the intent: where its core (surrounding quotes and punctuation cut) starts and ends. */
interface Word {
  start: number;
  end: number;
  lower: string;
  capitalised: boolean;
  /** Punctuation right after the word (a clause boundary). */
  breaksAfter: boolean;
}

function intentWords(intent: string): Word[] {
  const words: Word[] = [];
  for (const match of intent.matchAll(/\S+/g)) {
    const raw = match[0];
    // A leading currency sign goes too: a price field takes "35.00", not "$35.00".
    const lead = /^["'“‘(#$€£]*/.exec(raw)![0].length;
    const trail = /["'”’),.;:!?]*$/.exec(raw.slice(lead))![0].length;
    if (lead + trail >= raw.length) continue;
    const start = match.index + lead;
    const end = match.index + raw.length - trail;
    const core = intent.slice(start, end);
    words.push({
      start,
      end,
      lower: core.toLowerCase(),
      capitalised: /^[\p{Lu}\p{N}]/u.test(core),
      breaksAfter: /[,.;:!?]/.test(raw.slice(raw.length - trail)),
    });
  }
  return words;
}

/** Words after which an intent usually names the text to type ("search for X", "a post titled X"). */
const ARGUMENT_TRIGGERS = new Set(['for', 'named', 'called', 'titled', 'title', 'with', 'about', 'containing', 'as', 'to', 'is']);
/** Small words that may sit inside a name ("Camping & Hiking", "Pride and Prejudice"). */
const NAME_JOINERS = new Set(['&', 'and', 'of', 'the', 'for', 'in', 'on', 'de', 'a']);

/**
 * Candidate typed arguments from an intent, each an exact substring of the intent (inner punctuation
 * kept, outer quotes, punctuation and currency signs cut), in this order:
 *   quoted      quoted spans;
 *   trigger     the words after a trigger word up to the next punctuation (at most `maxPhraseWords`);
 *   run         maximal runs of non-stop words within a clause;
 *   name        maximal runs of capitalised words, small joiners allowed inside ("Camping & Hiking");
 *   run         maximal runs of non-stop words across commas ("Popcorn, Purple");
 *               runs and names that start a sentence also come without their first word ("Add X" gives X);
 *   ngram       single non-stop words, then n-grams of 2..`maxNgram` words neither starting nor ending
 *               with a stop word.
 * Duplicates (case-insensitive) are dropped; at most `limit` phrases.
 */
export function intentPhrases(intent: string, options: { maxNgram: number; maxPhraseWords: number; limit: number }): IntentPhrase[] {
  const seen = new Set<string>();
  const phrases: IntentPhrase[] = [];
  const add = (text: string, source: PhraseSource) => {
    const key = text.toLowerCase();
    if (!text || seen.has(key) || phrases.length >= options.limit) return;
    seen.add(key);
    phrases.push({ text, source });
  };
  const words = intentWords(intent);
  const span = (from: number, to: number) => intent.slice(words[from]!.start, words[to]!.end);
  const stop = (i: number) => isStopWord(words[i]!.lower);
  // A sentence's first word is capitalised and often an imperative ("Add X"): runs from it also come without it.
  const sentenceStart = (i: number) => i === 0 || /[.!?]$/.test(intent.slice(words[i - 1]!.end, words[i]!.start).trim());
  for (const quoted of quotedSpans(intent)) add(quoted, 'quoted');
  words.forEach((word, i) => {
    if (!ARGUMENT_TRIGGERS.has(word.lower) || word.breaksAfter) return;
    let last = i + 1;
    while (last < words.length - 1 && last - i < options.maxPhraseWords && !words[last]!.breaksAfter) last++;
    if (last < words.length && !stop(last)) add(span(i + 1, last), 'trigger');
  });
  const runs = (acrossCommas: boolean) => {
    for (let i = 0; i < words.length; i++) {
      if (stop(i) || (i > 0 && !stop(i - 1) && (acrossCommas || !words[i - 1]!.breaksAfter))) continue;
      let last = i;
      while (last + 1 < words.length && !stop(last + 1) && (acrossCommas || !words[last]!.breaksAfter)) last++;
      if (last > i) add(span(i, last), 'run');
      if (last > i + 1 && sentenceStart(i)) add(span(i + 1, last), 'run');
    }
  };
  runs(false);
  for (let i = 0; i < words.length; i++) {
    if (!words[i]!.capitalised || (i > 0 && words[i - 1]!.capitalised)) continue;
    let last = i;
    while (last + 1 < words.length) {
      const next = words[last + 1]!;
      if (next.capitalised) last++;
      else if (NAME_JOINERS.has(next.lower) && words[last + 2]?.capitalised && !words[last]!.breaksAfter) last += 2;
      else break;
    }
    if (last > i) add(span(i, last), 'name');
    if (last > i + 1 && sentenceStart(i)) add(span(i + 1, last), 'name');
  }
  runs(true);
  for (let i = 0; i < words.length; i++) if (!stop(i)) add(span(i, i), 'ngram');
  for (let n = 2; n <= options.maxNgram; n++) {
    for (let i = 0; i + n <= words.length; i++) {
      if (stop(i) || stop(i + n - 1)) continue;
      add(span(i, i + n - 1), 'ngram');
    }
  }
  return phrases;
}

/** Words that join a list's last item ("A, B and C", "A, B, or C"). */
const LIST_JOINERS = new Set(['and', 'or']);
/** Most words in one item of an intent's comma list. */
const MAX_LIST_ITEM_WORDS = 4;

/**
 * The comma lists of an intent outside its quoted spans ("a sidebar listing Packs, Shelters, Trips"), as
 * their items. Items after the first run to the next comma (at most `MAX_LIST_ITEM_WORDS` words); the
 * last ends at other punctuation or a stop word, and "and"/"or" may add one more item. Where the first
 * item starts is not marked, so each list comes once per first item of 1 to 3 words.
 */
export function intentLists(intent: string): string[][] {
  const quoted = quotedRanges(intent);
  const words = intentWords(intent).filter((word) => !quoted.some(({ start, end }) => word.start >= start && word.end <= end));
  const commaAfter = (i: number) => i + 1 < words.length && /^,\s*$/.test(intent.slice(words[i]!.end, words[i + 1]!.start));
  const stop = (i: number) => isStopWord(words[i]!.lower) && !LIST_JOINERS.has(words[i]!.lower);
  const text = (from: number, to: number) => intent.slice(words[from]!.start, words[to]!.end);
  const lists: string[][] = [];
  for (let first = 0; first < words.length; first++) {
    if (!commaAfter(first) || (first > 0 && commaAfter(first - 1))) continue;
    const items: string[] = [];
    let i = first + 1;
    while (i < words.length) {
      if (LIST_JOINERS.has(words[i]!.lower)) i++;
      let end = i;
      const inItem = (k: number) => k < words.length && k - i < MAX_LIST_ITEM_WORDS && !stop(k) && !LIST_JOINERS.has(words[k]!.lower);
      while (inItem(end) && !words[end]!.breaksAfter) end++;
      // The word before a comma or other punctuation still belongs to the item.
      if (inItem(end)) end++;
      if (end === i) break;
      items.push(text(i, end - 1));
      const joined = end < words.length && LIST_JOINERS.has(words[end]!.lower);
      if (!commaAfter(end - 1) && !joined) break;
      i = end;
    }
    if (items.length === 0) continue;
    for (let length = 1; length <= 3 && first - length + 1 >= 0; length++) {
      const start = first - length + 1;
      if (stop(start) || LIST_JOINERS.has(words[start]!.lower) || (start < first && words[start]!.breaksAfter)) break;
      lists.push([text(start, first), ...items]);
    }
  }
  return lists;
}

/** A visible text segment of a page; inside a table's body cell, the header of the cell's column. */
export interface PageSegment {
  text: string;
  column?: string;
}

/**
 * The visible text segments of a one-line simplified-HTML observation, in document order, entities
 * decoded. The options of a <select> are left out: they are the element's options, not page text.
 * A <td>'s column header is the last <th> before it at the same left edge and width (`data-bbox`).
 */
export function pageSegments(html: string): PageSegment[] {
  const segments: PageSegment[] = [];
  const headers = new Map<string, string>();
  let cell: { header: boolean; at: string | undefined; text: string[] } | undefined;
  for (const [part] of html.replace(/<option\b[^>]*>[^<]*<\/option>/gi, ' ').matchAll(/<[^>]*>|[^<]+/g)) {
    const tag = /^<(\/?)(td|th)\b/i.exec(part);
    if (tag && !tag[1]) {
      const box = /\bdata-bbox="(-?[\d.]+),-?[\d.]+,(-?[\d.]+),/.exec(part);
      cell = { header: tag[2]!.toLowerCase() === 'th', at: box ? `${box[1]},${box[2]}` : undefined, text: [] };
    } else if (tag) {
      if (cell?.header && cell.at) headers.set(cell.at, cell.text.join(' '));
      cell = undefined;
    }
    if (part.startsWith('<')) continue;
    const text = decodeEntities(part).replace(/\s+/g, ' ').trim();
    if (!text) continue;
    cell?.text.push(text);
    const column = cell && !cell.header && cell.at ? headers.get(cell.at) : undefined;
    segments.push(column ? { text, column } : { text });
  }
  return segments;
}

/** The texts of `pageSegments`. */
export function pageTextSegments(html: string): string[] {
  return pageSegments(html).map((segment) => segment.text);
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ', '#39': "'" };

function decodeEntities(text: string): string {
  return text.replace(/&(#\d+|#x[0-9a-f]+|[a-z]+\d*);/gi, (whole, name: string) => {
    const named = ENTITIES[name.toLowerCase()];
    if (named !== undefined) return named;
    if (name.startsWith('#x') || name.startsWith('#X')) return String.fromCodePoint(parseInt(name.slice(2), 16));
    if (name.startsWith('#')) return String.fromCodePoint(parseInt(name.slice(1), 10));
    return whole;
  });
}

/** Numbers and amounts inside a text ("$23.50", "1,200", "15%"), as written. */
export function numbersIn(text: string): string[] {
  return text.match(/[$€£]?\d[\d,]*(?:\.\d+)?%?/g) ?? [];
}

/** A coarse shape of an answer string, so features can tie "what is the price" to money-shaped answers. */
export function answerShape(message: string): string {
  const text = message.trim();
  if (text === '') return 'empty';
  if (/^n\/?a$/i.test(text)) return 'na';
  if (/^[$€£]\s?\d[\d,]*(?:\.\d+)?$/.test(text)) return 'money';
  if (/^\d[\d,]*(?:\.\d+)?%$/.test(text)) return 'percent';
  if (/^-?\d[\d,]*(?:\.\d+)?$/.test(text)) return 'number';
  if (/^\d{1,4}[-/]\d{1,2}[-/]\d{1,4}$/.test(text)) return 'date';
  const words = text.split(/\s+/).length;
  return words <= 3 ? 'short' : words <= 10 ? 'phrase' : 'long';
}

/** The path and query words of a URL (host and scheme dropped; split at every non-letter-or-digit). */
export function urlTokens(url: string): string[] {
  let text = url;
  try {
    const parsed = new URL(url);
    text = `${parsed.pathname} ${decodeURIComponent(parsed.search.replace(/\+/g, ' '))}`;
  } catch {
    // Not a URL: its words are still words.
  }
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** The URL's path segments, lower-cased, empty ones dropped. */
export function pathSegments(url: string): string[] {
  try {
    return new URL(url).pathname
      .toLowerCase()
      .split('/')
      .filter((segment) => segment !== '');
  } catch {
    return [];
  }
}
