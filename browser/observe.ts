/**
 * The observation the model reads (webrl.md §2): one line of simplified HTML,
 * `<tag id="N" k="v" ...> text children </tag>`, built from the annotated tree. Elements that carry
 * nothing (no id, no text, no printed attribute besides their box) are dropped and their children lifted;
 * the document's html and body always stay.
 */
import type { Page } from 'playwright-core';
import { annotatePage, type AnnotatedNode } from './annotate';
import type { Observation } from './contract';

export const VIEWPORT = { width: 1280, height: 720 } as const;

/** Printed attributes, in print order (webrl.md §2). */
const PRINTED_ATTRIBUTES = [
  'title',
  'value',
  'type',
  'placeholder',
  'selected',
  'data-value',
  'data-text',
  'data-testid',
  'data-label',
  'data-bbox',
  'data-status',
] as const;

/** Attributes that restate text; one equal to the element's text or to an earlier one is dropped. */
const TEXTUAL_ATTRIBUTES = new Set(['title', 'value', 'placeholder', 'data-value', 'data-text', 'data-label']);

function escapeText(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function escapeAttribute(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;');
}

function printedAttributes(node: AnnotatedNode, ownText: string): [string, string][] {
  const seen = new Set<string>([ownText.toLowerCase()]);
  const printed: [string, string][] = [];
  for (const name of PRINTED_ATTRIBUTES) {
    const value = node.attrs[name];
    if (!value) continue;
    if (TEXTUAL_ATTRIBUTES.has(name)) {
      if (seen.has(value.toLowerCase())) continue;
      seen.add(value.toLowerCase());
    }
    printed.push([name, value]);
  }
  return printed;
}

function render(node: AnnotatedNode, out: string[]): void {
  const ownText = node.children.filter((c): c is string => typeof c === 'string').join(' ');
  const attributes = printedAttributes(node, ownText);
  const carries = node.id !== undefined || ownText !== '' || attributes.some(([name]) => name !== 'data-bbox');
  if (!carries && !node.structural) {
    for (const child of node.children) if (typeof child !== 'string') render(child, out);
    return;
  }
  const id = node.id === undefined ? '' : ` id="${node.id}"`;
  const attrs = attributes.map(([name, value]) => ` ${name}="${escapeAttribute(value)}"`).join('');
  out.push(`<${node.tag}${id}${attrs}>`);
  for (const child of node.children) {
    if (typeof child === 'string') out.push(escapeText(child));
    else render(child, out);
  }
  out.push(`</${node.tag}>`);
}

/** The one-line simplified HTML of an annotated tree. */
export function renderSimplifiedHtml(root: AnnotatedNode): string {
  const out: string[] = [];
  render(root, out);
  return out.join(' ');
}

/** Annotates the page and returns what the model sees plus the elements an oracle can match. */
export async function observe(page: Page): Promise<Observation> {
  const annotation = await annotatePage(page);
  return {
    url: annotation.url,
    title: annotation.title,
    html: renderSimplifiedHtml(annotation.root),
    elements: annotation.elements,
  };
}
