/**
 * How WebArena's harness turns what it read off a page into the text it compares: Python's `str()`
 * of the value `page.evaluate` returned (`None`, `True`, `['a', 'b']`), then `html.unescape`.
 */
import type { Page } from 'playwright-core';

function pythonRepr(value: unknown): string {
  if (typeof value === 'string') {
    const quote = value.includes("'") && !value.includes('"') ? '"' : "'";
    const body = value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/\r/g, '\\r').replace(/\t/g, '\\t').replaceAll(quote, `\\${quote}`);
    return `${quote}${body}${quote}`;
  }
  return pythonStr(value);
}

function pythonFloat(value: number): string {
  if (Number.isNaN(value)) return 'nan';
  if (!Number.isFinite(value)) return value > 0 ? 'inf' : '-inf';
  return String(value);
}

/** Python's `str()` of a value Playwright hands over from the page. */
export function pythonStr(value: unknown): string {
  if (value === null || value === undefined) return 'None';
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'number') return pythonFloat(value);
  if (Array.isArray(value)) return `[${value.map(pythonRepr).join(', ')}]`;
  if (value instanceof Date) return value.toISOString().replace('T', ' ').replace('Z', '+00:00');
  if (typeof value === 'object')
    return `{${Object.entries(value)
      .map(([k, v]) => `${pythonRepr(k)}: ${pythonRepr(v)}`)
      .join(', ')}}`;
  return String(value);
}

/** The character references Python's `html.unescape` looks at. */
const CHARREF = /&(#[0-9]+;?|#[xX][0-9a-fA-F]+;?|[^\t\n\f <&#;]{1,32};?)/g;

const BASIC: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' };

/** Numeric references and the basic named ones, for when the page cannot decode (a closed page). */
function unescapeBasic(reference: string): string {
  const numeric = /^&#([xX][0-9a-fA-F]+|[0-9]+);?$/.exec(reference);
  if (numeric) {
    const digits = numeric[1]!;
    const code = digits[0] === 'x' || digits[0] === 'X' ? Number.parseInt(digits.slice(1), 16) : Number.parseInt(digits, 10);
    return code > 0 && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff) ? String.fromCodePoint(code) : '\ufffd';
  }
  const named = /^&([A-Za-z]+);?$/.exec(reference);
  return (named && BASIC[named[1]!]) ?? reference;
}

/**
 * Python's `html.unescape`: every character reference decoded by HTML5's rules. The page's own HTML
 * parser decodes each distinct reference (a text fragment without `<`, so nothing else is parsed),
 * which gives the whole HTML5 entity table without shipping it.
 */
export async function unescapeHtml(page: Page, text: string): Promise<string> {
  const references = [...new Set([...text.matchAll(CHARREF)].map((m) => m[0]))];
  if (references.length === 0) return text;
  let decoded: string[];
  try {
    decoded = await page.evaluate((items) => {
      const template = document.createElement('template');
      return items.map((item) => {
        template.innerHTML = item;
        return template.content.textContent ?? item;
      });
    }, references);
  } catch {
    decoded = references.map(unescapeBasic);
  }
  const table = new Map(references.map((reference, i) => [reference, decoded[i] ?? reference]));
  return text.replace(CHARREF, (reference) => table.get(reference) ?? reference);
}
