/**
 * The observation the model reads (webrl.md §2): one line of simplified HTML,
 * `<tag id="N" k="v" ...> text children </tag>`, built from the annotated tree. Two profiles:
 *
 * - `default`: elements that carry nothing (no id, no text, no printed attribute besides their box) are
 *   dropped and their children lifted; the document's html and body always stay; text runs print where
 *   they stand, escaped; a textual attribute equal to the text or to an earlier one is dropped.
 * - `webrl`: as the reference harness prints (docs/webrl-fidelity.md): an element prints when it has an
 *   id, text of its own or an attribute besides its box, or two or more children with content; its text
 *   is its leading text only; an attribute whose value an earlier one has is dropped; nothing is escaped.
 */
import type { Page } from 'playwright-core';
import { annotatePage, type AnnotatedNode, type ObservationProfile } from './annotate';
import type { Observation } from './contract';

export type { ObservationProfile } from './annotate';
export const OBSERVATION_PROFILES: readonly ObservationProfile[] = ['default', 'webrl'];

export const VIEWPORT = { width: 1280, height: 720 } as const;

/** Printed attributes, in print order (webrl.md §2; the reference's list, both profiles). */
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

/** webrl: the attributes in print order, without a value an earlier attribute has (compared exactly). */
function webrlPrintedAttributes(node: AnnotatedNode): [string, string][] {
  const seen = new Set<string>();
  const printed: [string, string][] = [];
  for (const name of PRINTED_ATTRIBUTES) {
    const value = node.attrs[name];
    if (!value || seen.has(value)) continue;
    seen.add(value);
    printed.push([name, value]);
  }
  return printed;
}

/** How a profile prints one node: whether it prints at all, its attributes, and its text and children in order. */
interface Printed {
  carries: boolean;
  attributes: [string, string][];
  content: (AnnotatedNode | string)[];
}

function printDefault(node: AnnotatedNode): Printed {
  const ownText = node.children.filter((c): c is string => typeof c === 'string').join(' ');
  const attributes = printedAttributes(node, ownText);
  const carries = node.structural === true || node.id !== undefined || ownText !== '' || attributes.some(([name]) => name !== 'data-bbox');
  return { carries, attributes, content: node.children.map((c) => (typeof c === 'string' ? escapeText(c) : c)) };
}

function printWebrl(node: AnnotatedNode): Printed {
  const lead = node.lead ?? '';
  const ownContent = lead !== '' || PRINTED_ATTRIBUTES.some((name) => name !== 'data-bbox' && node.attrs[name]);
  const carries = node.id !== undefined || (!node.ariaHidden && (ownContent || (node.filled ?? 0) > 1));
  const children = node.children.filter((c): c is AnnotatedNode => typeof c !== 'string');
  return { carries, attributes: webrlPrintedAttributes(node), content: lead ? [lead, ...children] : children };
}

function render(node: AnnotatedNode, out: string[], print: (node: AnnotatedNode) => Printed, quote: (value: string) => string): void {
  const { carries, attributes, content } = print(node);
  if (!carries) {
    for (const child of node.children) if (typeof child !== 'string') render(child, out, print, quote);
    return;
  }
  const id = node.id === undefined ? '' : ` id="${node.id}"`;
  const attrs = attributes.map(([name, value]) => ` ${name}="${quote(value)}"`).join('');
  out.push(`<${node.tag}${id}${attrs}>`);
  for (const child of content) {
    if (typeof child === 'string') out.push(child);
    else render(child, out, print, quote);
  }
  out.push(`</${node.tag}>`);
}

/** The one-line simplified HTML of an annotated tree, as the profile prints it. */
export function renderSimplifiedHtml(root: AnnotatedNode, profile: ObservationProfile = 'default'): string {
  const out: string[] = [];
  if (profile === 'webrl') render(root, out, printWebrl, (value) => value);
  else render(root, out, printDefault, escapeAttribute);
  return out.join(' ');
}

/** Annotates the page and returns what the model sees plus the elements an oracle can match. */
export async function observe(page: Page, profile: ObservationProfile = 'default'): Promise<Observation> {
  const annotation = await annotatePage(page, profile);
  return {
    url: annotation.url,
    title: annotation.title,
    html: renderSimplifiedHtml(annotation.root, profile),
    elements: annotation.elements,
  };
}
