/**
 * The string comparisons of the two evaluation harnesses. WebArena-Lite's: normalise (one pair of
 * surrounding quotes removed, lower-cased; no trimming), exact match, and must-include / must-exclude
 * where a reference that is a single token must equal a whole token of the prediction (so "0" does
 * not match "10"). The original WebArena's (`webArena*`): the answer is trimmed first, and only a
 * one-character reference that is the sole item of its list must be a whole token.
 */

/** Whose evaluation semantics a task is scored with. */
export const HARNESSES = ['webarena-lite', 'webarena'] as const;
export type Harness = (typeof HARNESSES)[number];

export function normalizeAnswer(text: string): string {
  let out = text;
  if (out.length >= 2 && ((out.startsWith("'") && out.endsWith("'")) || (out.startsWith('"') && out.endsWith('"')))) {
    out = out.slice(1, -1);
  }
  return out.toLowerCase();
}

/**
 * Word tokens in the manner of NLTK's word_tokenize (which WebArena uses): runs of word characters
 * with inner `.`, `,`, `'`, `-`, `/`, `:` kept (numbers, dates, paths), every other symbol its own
 * token. Tokens containing `/` also contribute their parts, so `/a/b.html` yields `a` and `b.html`.
 */
export function tokenize(text: string): string[] {
  const tokens: string[] = [];
  for (const token of wordTokens(text)) {
    tokens.push(token);
    if (token.includes('/')) tokens.push(...token.split('/').filter(Boolean));
  }
  return tokens;
}

function wordTokens(text: string): string[] {
  return [...text.matchAll(/[\p{L}\p{N}_]+(?:[.,'’\-/:][\p{L}\p{N}_]+)*|[^\s\p{L}\p{N}_]/gu)].map((m) => m[0]);
}

export function exactMatch(reference: string, prediction: string): boolean {
  return normalizeAnswer(prediction) === normalizeAnswer(reference);
}

function occurs(reference: string, prediction: string): boolean {
  const ref = normalizeAnswer(reference);
  const pred = normalizeAnswer(prediction);
  if (wordTokens(ref).length === 1) return tokenize(pred).includes(ref);
  return pred.includes(ref);
}

/** One must_include item: any of its ` |OR| ` alternatives occurs. */
export function mustInclude(reference: string, prediction: string): boolean {
  return reference.split(' |OR| ').some((alternative) => occurs(alternative, prediction));
}

export function mustExclude(reference: string, prediction: string): boolean {
  return !occurs(reference, prediction);
}

/** The original harness's cleaning: trimmed, then one pair of surrounding quotes removed, lower-cased. */
export function webArenaClean(text: string): string {
  let out = text.trim();
  if ((out.startsWith("'") && out.endsWith("'")) || (out.startsWith('"') && out.endsWith('"'))) out = out.slice(1, -1);
  return out.toLowerCase();
}

export function webArenaExactMatch(reference: string, prediction: string): boolean {
  return webArenaClean(prediction) === webArenaClean(reference);
}

/**
 * The original harness's must_include: a substring test, except that with `tokenizeSingle` (string
 * answers whose list has one item) a one-character reference must be a whole word token.
 */
export function webArenaMustInclude(reference: string, prediction: string, tokenizeSingle: boolean): boolean {
  const ref = webArenaClean(reference);
  const pred = webArenaClean(prediction);
  if (tokenizeSingle && [...ref].length === 1 && wordTokens(ref).length === 1) return wordTokens(pred).includes(ref);
  return pred.includes(ref);
}
