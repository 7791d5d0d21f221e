/**
 * The observation the models read, rebuilt from the one-line simplified HTML (webrl.md §2) and the URL:
 * the two fields a trace row keeps (§5). Live observations go through the same rebuild, so a model
 * featurizes a live page and its stored trace alike and can train on traces. Every tag with an
 * `id="N"` attribute becomes element N: its tag, printed attributes, own text, full text (its subtree),
 * box (`data-bbox`), value, and for a <select> its <option> texts and the selected one; the title is
 * the page's first <h1> (or <h2>) text. What the HTML does not print (attributes such as name, ARIA
 * roles) is not seen by the models.
 */
import type { Observation, ObservedElement } from '../browser/contract';

const VOID_TAGS = new Set(['br', 'hr', 'img', 'meta', 'link', 'wbr']);

function decode(text: string): string {
  return text
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;|&apos;/g, "'")
    .replace(/&nbsp;/g, ' ')
    .replace(/&amp;/g, '&');
}

function parseAttributes(source: string): Record<string, string> {
  const attributes: Record<string, string> = {};
  for (const match of source.matchAll(/([^\s=/]+)\s*=\s*("([^"]*)"|'([^']*)'|([^\s"'>]+))/g)) {
    attributes[match[1]!.toLowerCase()] = decode(match[3] ?? match[4] ?? match[5] ?? '');
  }
  return attributes;
}

const collapse = (text: string) => text.replace(/\s+/g, ' ').trim();

interface OpenElement {
  tag: string;
  attributes: Record<string, string>;
  ownText: string[];
  allText: string[];
  options: string[];
  selected?: string;
  /** The option being read, inside a select. */
  inOption?: { text: string[]; selected: boolean };
}

export function observationFromHtml(url: string, html: string): Observation {
  const elements: ObservedElement[] = [];
  const headings: Record<string, string> = {};
  const stack: OpenElement[] = [];
  const close = (open: OpenElement) => {
    if ((open.tag === 'h1' || open.tag === 'h2') && headings[open.tag] === undefined) headings[open.tag] = collapse(open.allText.join(' '));
    const id = Number(open.attributes.id);
    if (!/^\d+$/.test(open.attributes.id ?? '') || !Number.isSafeInteger(id)) return;
    const box = (open.attributes['data-bbox'] ?? '').split(',').map(Number);
    const { id: _id, 'data-bbox': _box, ...attributes } = open.attributes;
    const element: ObservedElement = {
      id,
      tag: open.tag,
      text: collapse(open.ownText.join(' ')),
      fullText: collapse(open.allText.join(' ')).slice(0, 500),
      attributes,
      bbox: box.length === 4 && box.every(Number.isFinite) ? (box as [number, number, number, number]) : [0, 0, 0, 0],
    };
    if (attributes.value !== undefined) element.value = attributes.value;
    if (open.tag === 'select') {
      element.options = open.options;
      const selected = open.selected ?? attributes['data-value'];
      if (selected !== undefined) element.selectedOption = selected;
    }
    elements.push(element);
  };
  for (const match of html.matchAll(/<(\/?)([a-zA-Z][\w-]*)([^>]*)>|([^<]+)/g)) {
    const [, slash, rawTag, rawAttributes, text] = match;
    if (text !== undefined) {
      const words = decode(text);
      const top = stack[stack.length - 1];
      if (top?.inOption) top.inOption.text.push(words);
      else if (top) top.ownText.push(words);
      for (const open of stack) if (!open.inOption) open.allText.push(words);
      continue;
    }
    const tag = rawTag!.toLowerCase();
    if (tag === 'option') {
      // Options belong to the select around them, not to the element tree.
      const select = stack[stack.length - 1];
      if (!select) continue;
      if (!slash) select.inOption = { text: [], selected: /\bselected\b/.test(rawAttributes ?? '') };
      else if (select.inOption) {
        const option = collapse(select.inOption.text.join(' '));
        select.options.push(option);
        if (select.inOption.selected) select.selected = option;
        delete select.inOption;
      }
      continue;
    }
    if (!slash) {
      const open: OpenElement = { tag, attributes: parseAttributes(rawAttributes ?? ''), ownText: [], allText: [], options: [] };
      if (VOID_TAGS.has(tag) || (rawAttributes ?? '').trim().endsWith('/')) close(open);
      else stack.push(open);
      continue;
    }
    // Close up to the matching tag; unmatched closers are ignored.
    const at = stack.map((open) => open.tag).lastIndexOf(tag);
    if (at < 0) continue;
    while (stack.length > at) close(stack.pop()!);
  }
  while (stack.length > 0) close(stack.pop()!);
  elements.sort((a, b) => a.id - b.id);
  return { url, title: headings.h1 ?? headings.h2 ?? '', html, elements };
}

const canonical = new WeakMap<Observation, Observation>();

/** `observationFromHtml` of an observation's URL and HTML, computed once per observation object. */
export function canonicalObservation(observation: Observation): Observation {
  let rebuilt = canonical.get(observation);
  if (!rebuilt) {
    rebuilt = observationFromHtml(observation.url, observation.html);
    canonical.set(observation, rebuilt);
  }
  return rebuilt;
}
