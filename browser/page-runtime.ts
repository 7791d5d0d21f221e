/**
 * The code that runs inside the page: annotation (webrl.md §2), element lookup for the executor, dropdown
 * selection, scrolling and DOM-quiet detection. `createPageRuntime` is serialised with `toString()` and
 * evaluated in the page (see page-call.ts), so it must reference nothing outside itself: no imports, no
 * module constants; types are fine (they vanish).
 *
 * Frames: same-origin iframes are walked as part of the page (their content sits inside the `<iframe>`
 * node, ids continue in document order, boxes are in top-viewport coordinates). Cross-origin iframes
 * cannot be read from the page; each is one opaque clickable `<iframe>`. Shadow DOM is not entered.
 */
import type { ObservedElement } from './contract';

/** One printed element of the annotated tree; strings are visible text runs. */
export interface AnnotatedNode {
  tag: string;
  /** The element id the model refers to (clickables only). */
  id?: number;
  /** Candidate printable attributes (webrl.md §2 whitelist), values already whitespace-collapsed. */
  attrs: Record<string, string>;
  children: (AnnotatedNode | string)[];
  /** Always printed even when it carries nothing itself (the document's html and body). */
  structural?: boolean;
}

/** An observed element as the page reports it: the page always knows the element's full text. */
export type AnnotatedElement = ObservedElement & { fullText: string };

export interface AnnotationResult {
  url: string;
  title: string;
  root: AnnotatedNode;
  elements: AnnotatedElement[];
}

interface Rect {
  left: number;
  top: number;
  right: number;
  bottom: number;
}

export interface ClickTarget {
  x: number;
  y: number;
  /** A click there follows a link into another tab (target=_blank or a named window). */
  opensTab: boolean;
}

export type SelectResult = { ok: true; chosen: string } | { ok: false; error: string };

export function createPageRuntime() {
  const MARK = 'data-webrl-id';
  const MAX_CHARS = 500;
  const INTERACTIVE_TAGS = new Set(['a', 'button', 'input', 'select', 'textarea', 'iframe', 'details', 'summary']);
  const INTERACTIVE_ROLES = new Set([
    'button', 'link', 'tab', 'checkbox', 'radio', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'option',
    'switch', 'combobox', 'textbox', 'searchbox', 'slider', 'spinbutton', 'treeitem',
  ]);
  const SKIPPED_TAGS = new Set(['script', 'style', 'noscript', 'template', 'head', 'meta', 'link', 'title']);


  /** A document being walked: where its viewport sits in the top viewport, and how much of it shows. */
  interface FrameInfo {
    doc: Document;
    win: Window;
    dx: number;
    dy: number;
    clip: Rect;
    /** The iframe element hosting this document and the frame it sits in (none for the top document). */
    host?: { element: Element; frame: FrameInfo };
  }

  const EMPTY: Rect = { left: 0, top: 0, right: 0, bottom: 0 };
  const collapse = (text: string) => text.replace(/\s+/g, ' ').trim();
  const cut = (text: string) => (text.length > MAX_CHARS ? text.slice(0, MAX_CHARS).trimEnd() : text);

  function intersect(a: Rect, b: Rect): Rect | null {
    const r = {
      left: Math.max(a.left, b.left),
      top: Math.max(a.top, b.top),
      right: Math.min(a.right, b.right),
      bottom: Math.min(a.bottom, b.bottom),
    };
    return r.right > r.left && r.bottom > r.top ? r : null;
  }

  function boxIn(frame: FrameInfo, r: DOMRect): Rect {
    return { left: r.left + frame.dx, top: r.top + frame.dy, right: r.right + frame.dx, bottom: r.bottom + frame.dy };
  }

  function topFrame(): FrameInfo {
    const clip = { left: 0, top: 0, right: window.innerWidth, bottom: window.innerHeight };
    return { doc: document, win: window, dx: 0, dy: 0, clip };
  }

  /** The document inside a same-origin iframe, placed at the iframe's content box; null when unreadable. */
  function childFrame(iframe: HTMLIFrameElement, parent: FrameInfo): FrameInfo | null {
    let doc: Document | null = null;
    try {
      doc = iframe.contentDocument;
    } catch {
      return null;
    }
    const win = iframe.contentWindow;
    if (!doc || !win || !doc.documentElement) return null;
    const style = parent.win.getComputedStyle(iframe);
    const outer = boxIn(parent, iframe.getBoundingClientRect());
    const dx = outer.left + iframe.clientLeft + parseFloat(style.paddingLeft || '0');
    const dy = outer.top + iframe.clientTop + parseFloat(style.paddingTop || '0');
    const content = { left: dx, top: dy, right: dx + iframe.clientWidth, bottom: dy + iframe.clientHeight };
    const clip = intersect(parent.clip, content) ?? EMPTY;
    return { doc, win, dx, dy, clip, host: { element: iframe, frame: parent } };
  }

  /** Whether a top-viewport point reaches this frame's document through every enclosing iframe. */
  function pointReaches(frame: FrameInfo, x: number, y: number): boolean {
    if (!frame.host) return true;
    const parent = frame.host.frame;
    return pointReaches(parent, x, y) && parent.doc.elementFromPoint(x - parent.dx, y - parent.dy) === frame.host.element;
  }

  function clipsContent(style: CSSStyleDeclaration): boolean {
    return style.overflowX !== 'visible' || style.overflowY !== 'visible';
  }

  /**
   * The part of the frame where the element can show: the frame's clip cut by every ancestor that clips
   * its overflow, up to the first fixed-position box (which escapes its ancestors). Absolutely positioned
   * boxes escaping a static ancestor are not modelled; the hit test still guards clicks.
   */
  function clipFor(el: Element, frame: FrameInfo): Rect | null {
    let clip: Rect | null = frame.clip;
    for (let node: Element = el; clip; ) {
      if (frame.win.getComputedStyle(node).position === 'fixed') break;
      const parent = node.parentElement;
      if (!parent) break;
      if (clipsContent(frame.win.getComputedStyle(parent))) clip = intersect(clip, boxIn(frame, parent.getBoundingClientRect()));
      node = parent;
    }
    return clip;
  }

  /** Centre of the element's visible part, if that point hit-tests to the element or a descendant. */
  function clickPoint(el: Element, frame: FrameInfo): ClickTarget | null {
    const clip = clipFor(el, frame);
    const visible = clip && intersect(boxIn(frame, el.getBoundingClientRect()), clip);
    if (!visible) return null;
    const x = (visible.left + visible.right) / 2;
    const y = (visible.top + visible.bottom) / 2;
    const hit = frame.doc.elementFromPoint(x - frame.dx, y - frame.dy);
    if (!hit || !el.contains(hit) || !pointReaches(frame, x, y)) return null;
    return { x, y, opensTab: opensTab(hit) };
  }

  function opensTab(el: Element): boolean {
    const link = el.closest('a[href], area[href]');
    if (!link || link.hasAttribute('download')) return false;
    const target = (link.getAttribute('target') ?? '').trim().toLowerCase();
    return target !== '' && target !== '_self' && target !== '_parent' && target !== '_top';
  }

  function isEditableRoot(el: Element): boolean {
    const value = el.getAttribute('contenteditable');
    if (value === null || value === 'false') return false;
    const parent = el.parentElement;
    return !(parent && (parent as HTMLElement).isContentEditable);
  }

  function isClickable(el: Element, tag: string, style: CSSStyleDeclaration, parentPointer: boolean): boolean {
    if (INTERACTIVE_TAGS.has(tag)) return true;
    const role = el.getAttribute('role');
    if (role && INTERACTIVE_ROLES.has(role.trim().toLowerCase())) return true;
    if (el.hasAttribute('onclick') || typeof (el as HTMLElement).onclick === 'function') return true;
    // The cursor inherits: only the element that introduces the pointer counts, not its descendants.
    if (style.cursor === 'pointer' && !parentPointer) return true;
    if (isEditableRoot(el)) return true;
    const tabindex = el.getAttribute('tabindex');
    if (tabindex !== null && tabindex.trim() !== '' && Number(tabindex) >= 0) return true;
    return (el.getAttribute('class') ?? '').toLowerCase().includes('button');
  }

  function directText(el: Element): string {
    let text = '';
    for (const child of Array.from(el.childNodes)) if (child.nodeType === Node.TEXT_NODE) text += ` ${child.nodeValue ?? ''}`;
    return cut(collapse(text));
  }

  /** Every text run inside the element, space-separated (textContent would glue "Red" and "Blue"). */
  function allText(el: Element): string {
    const walker = el.ownerDocument.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    const runs: string[] = [];
    for (let node = walker.nextNode(); node; node = walker.nextNode()) runs.push(node.nodeValue ?? '');
    return cut(collapse(runs.join(' ')));
  }

  function referencedText(doc: Document, ids: string): string {
    return collapse(
      ids
        .split(/\s+/)
        .map((id) => (id ? doc.getElementById(id)?.textContent ?? '' : ''))
        .join(' '),
    );
  }

  /** The element's label: data-label, aria-label, aria-labelledby, associated <label>s, or an image's alt. */
  function labelOf(el: Element): string {
    const own = el.getAttribute('data-label') ?? el.getAttribute('aria-label');
    if (own) return own;
    const labelledBy = el.getAttribute('aria-labelledby');
    if (labelledBy) return referencedText(el.ownerDocument, labelledBy);
    const labels = (el as HTMLInputElement).labels;
    if (labels && labels.length > 0) return Array.from(labels, (l) => l.textContent ?? '').join(' ');
    return el.getAttribute('alt') ?? '';
  }

  function statusOf(el: Element, tag: string): string {
    const states: string[] = [];
    const own = el.getAttribute('data-status');
    if (own) states.push(own);
    const input = el as HTMLInputElement;
    if (tag === 'input' && (input.type === 'checkbox' || input.type === 'radio')) {
      states.push(input.checked ? 'checked' : 'not-checked');
    } else if (el.hasAttribute('aria-checked')) {
      states.push(el.getAttribute('aria-checked') === 'true' ? 'checked' : 'not-checked');
    }
    if (el.getAttribute('aria-selected') === 'true') states.push('selected');
    if (tag === 'details') states.push((el as HTMLDetailsElement).open ? 'expanded' : 'collapsed');
    else if (el.hasAttribute('aria-expanded')) states.push(el.getAttribute('aria-expanded') === 'true' ? 'expanded' : 'collapsed');
    if ((el as HTMLButtonElement).disabled === true || el.getAttribute('aria-disabled') === 'true') states.push('disabled');
    return states.join(' ');
  }

  /** The live value the model should see; password values stay hidden, checkboxes show data-status instead. */
  function liveValue(el: Element, tag: string): string | null {
    if (tag === 'textarea') return (el as HTMLTextAreaElement).value;
    if (tag !== 'input') return el.getAttribute('value');
    const input = el as HTMLInputElement;
    if (input.type === 'password') return null;
    if (input.type === 'checkbox' || input.type === 'radio') return el.getAttribute('value');
    return input.value;
  }

  function printedAttributes(el: Element, tag: string, box: Rect | null): Record<string, string> {
    const attrs: Record<string, string> = {};
    const put = (name: string, value: string | null | undefined) => {
      const clean = value == null ? '' : cut(collapse(value));
      if (clean) attrs[name] = clean;
    };
    put('title', el.getAttribute('title'));
    put('value', liveValue(el, tag));
    put('type', el.getAttribute('type'));
    put('placeholder', el.getAttribute('placeholder'));
    if (tag === 'option' && (el as HTMLOptionElement).selected) attrs.selected = 'true';
    put(
      'data-value',
      tag === 'select' ? ((el as HTMLSelectElement).selectedOptions[0]?.text ?? '') : el.getAttribute('data-value'),
    );
    put('data-text', el.getAttribute('data-text'));
    put('data-testid', el.getAttribute('data-testid'));
    put('data-label', labelOf(el));
    if (box) {
      const w = box.right - box.left;
      const h = box.bottom - box.top;
      attrs['data-bbox'] = [box.left, box.top, w, h].map(Math.round).join(',');
    }
    put('data-status', statusOf(el, tag));
    return attrs;
  }

  function describe(el: Element, tag: string, id: number, frame: FrameInfo): AnnotatedElement {
    const attributes: Record<string, string> = {};
    for (const attr of Array.from(el.attributes)) if (attr.name !== MARK) attributes[attr.name] = attr.value;
    const b = boxIn(frame, el.getBoundingClientRect());
    const described: AnnotatedElement = {
      id,
      tag,
      text: directText(el),
      fullText: allText(el),
      attributes,
      bbox: [b.left, b.top, b.right - b.left, b.bottom - b.top].map(Math.round) as [number, number, number, number],
    };
    const role = el.getAttribute('role');
    if (role) described.role = role;
    if (tag === 'input' || tag === 'textarea') {
      const input = el as HTMLInputElement;
      described.value = input.value;
      if (input.type === 'checkbox' || input.type === 'radio') described.checked = input.checked;
    } else if (tag === 'select') {
      const select = el as HTMLSelectElement;
      described.value = select.value;
      described.options = Array.from(select.options, (o) => collapse(o.text));
      const selected = select.selectedOptions[0];
      if (selected) described.selectedOption = collapse(selected.text);
    }
    return described;
  }

  function textRunVisible(node: Text, frame: FrameInfo, clip: Rect): boolean {
    const range = frame.doc.createRange();
    range.selectNodeContents(node);
    return intersect(boxIn(frame, range.getBoundingClientRect()), clip) !== null;
  }

  function annotate(): AnnotationResult {
    interface Slot {
      el: Element;
      tag: string;
      frame: FrameInfo;
      node: AnnotatedNode;
      keep: boolean;
    }
    const slots: Slot[] = [];
    const documents: Document[] = [];

    interface Walk {
      out: (AnnotatedNode | string)[];
      /** The subtree holds a clickable that keeps its id (so enclosing clickables lose theirs). */
      clickable: boolean;
    }

    /** `shown`: no transparent ancestor; text runs also need their parent's visibility (children may override it). */
    function walkChildren(parent: Element, frame: FrameInfo, clip: Rect, pointer: boolean, shown: boolean, textVisible: boolean): Walk {
      const out: (AnnotatedNode | string)[] = [];
      let clickable = false;
      for (const child of Array.from(parent.childNodes)) {
        if (child.nodeType === Node.TEXT_NODE) {
          const text = cut(collapse(child.nodeValue ?? ''));
          if (text && textVisible && textRunVisible(child as Text, frame, clip)) out.push(text);
        } else if (child.nodeType === Node.ELEMENT_NODE) {
          const walked = walkElement(child as Element, frame, clip, pointer, shown);
          out.push(...walked.out);
          clickable ||= walked.clickable;
        }
      }
      return { out, clickable };
    }

    function walkOptions(select: HTMLSelectElement): AnnotatedNode[] {
      return Array.from(select.options, (option) => ({
        tag: 'option',
        attrs: printedAttributes(option, 'option', null),
        children: collapse(option.text) ? [cut(collapse(option.text))] : [],
      }));
    }

    function walkElement(el: Element, frame: FrameInfo, clip: Rect, parentPointer: boolean, parentShown: boolean): Walk {
      const tag = el.tagName.toLowerCase();
      if (SKIPPED_TAGS.has(tag)) return { out: [], clickable: false };
      const style = frame.win.getComputedStyle(el);
      const structural = frame.doc === document && (tag === 'html' || tag === 'body');
      // checkVisibility() is false for display:none and for content skipped by content-visibility (a
      // closed <details>): nothing below renders either.
      if (!structural && (style.display === 'none' || !el.checkVisibility())) return { out: [], clickable: false };
      const box = boxIn(frame, el.getBoundingClientRect());
      // A fixed box escapes the clipping of its ancestors.
      const ownClip = style.position === 'fixed' ? frame.clip : clip;
      // Opacity does not inherit in computed style, so transparency is carried down the walk.
      const shown = parentShown && Number(style.opacity) !== 0;
      const visible = shown && style.visibility === 'visible' && intersect(box, ownClip) !== null;
      const node: AnnotatedNode = { tag, attrs: visible || structural ? printedAttributes(el, tag, box) : {}, children: [] };
      if (structural) node.structural = true;

      const slot: Slot | null =
        visible && isClickable(el, tag, style, parentPointer) && clickPoint(el, frame) ? { el, tag, frame, node, keep: true } : null;
      if (slot) slots.push(slot);

      const childClip = clipsContent(style) ? (intersect(ownClip, box) ?? EMPTY) : ownClip;
      let inner: Walk;
      if (tag === 'select') {
        inner = { out: visible ? walkOptions(el as HTMLSelectElement) : [], clickable: false };
      } else if (tag === 'iframe') {
        const child = childFrame(el as HTMLIFrameElement, frame);
        if (child) documents.push(child.doc);
        inner = child
          ? walkElement(child.doc.documentElement, child, child.clip, false, shown)
          : { out: [], clickable: false };
      } else {
        inner = walkChildren(el, frame, childClip, style.cursor === 'pointer', shown, shown && style.visibility === 'visible');
      }
      // Only the innermost of nested clickables keeps an id.
      if (slot && inner.clickable) slot.keep = false;
      const clickable = inner.clickable || slot !== null;
      if (!visible && !structural) return { out: inner.out, clickable };
      node.children = inner.out;
      return { out: [node], clickable };
    }

    const frame = topFrame();
    documents.push(document);
    // The top html element is structural, so the walk yields exactly that node.
    const root = walkElement(document.documentElement, frame, frame.clip, false, true).out[0] as AnnotatedNode;

    const elements: AnnotatedElement[] = [];
    const marked = new Set<Element>();
    for (const slot of slots) {
      if (!slot.keep) continue;
      const id = elements.length;
      slot.node.id = id;
      elements.push(describe(slot.el, slot.tag, id, slot.frame));
      marked.add(slot.el);
      // Rewriting an unchanged mark would be a needless DOM mutation.
      if (slot.el.getAttribute(MARK) !== String(id)) slot.el.setAttribute(MARK, String(id));
    }
    for (const doc of documents) {
      for (const stale of Array.from(doc.querySelectorAll(`[${MARK}]`))) if (!marked.has(stale)) stale.removeAttribute(MARK);
    }
    return { url: location.href, title: document.title, root, elements };
  }

  /** The element carrying mark `id` and the frame it lives in, searching same-origin iframes too. */
  function findMarked(id: number): { el: Element; frame: FrameInfo } | null {
    const search = (frame: FrameInfo): { el: Element; frame: FrameInfo } | null => {
      const el = frame.doc.querySelector(`[${MARK}="${id}"]`);
      if (el) return { el, frame };
      for (const iframe of Array.from(frame.doc.querySelectorAll('iframe'))) {
        const child = childFrame(iframe, frame);
        const found = child && search(child);
        if (found) return found;
      }
      return null;
    };
    return search(topFrame());
  }

  /** Where to click element `id` (scrolling it into view when needed); null when it is gone or covered. */
  function locate(id: number): ClickTarget | null {
    const found = findMarked(id);
    if (!found) return null;
    const point = clickPoint(found.el, found.frame);
    if (point) return point;
    found.el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
    const again = findMarked(id);
    return again && clickPoint(again.el, again.frame);
  }

  /** Chooses the first option whose text contains `wanted` (case-insensitive), firing input and change. */
  function selectOption(id: number, wanted: string): SelectResult {
    const found = findMarked(id);
    if (!found) return { ok: false, error: `element ${id} is not on the page` };
    const select = found.el.tagName === 'SELECT' ? (found.el as HTMLSelectElement) : found.el.querySelector('select');
    if (!select) return { ok: false, error: `element ${id} is not a dropdown` };
    const needle = wanted.trim().toLowerCase();
    const options = Array.from(select.options);
    const index = options.findIndex((o) => collapse(o.text).toLowerCase().includes(needle));
    if (index < 0) {
      const texts = options.map((o) => JSON.stringify(collapse(o.text))).join(', ');
      return { ok: false, error: `no option of element ${id} contains ${JSON.stringify(wanted)} (options: ${texts})` };
    }
    select.selectedIndex = index;
    select.dispatchEvent(new Event('input', { bubbles: true }));
    select.dispatchEvent(new Event('change', { bubbles: true }));
    return { ok: true, chosen: collapse(options[index]?.text ?? '') };
  }

  /**
   * Scrolls by 2/3 of the viewport height: the document when it can move that way, otherwise the largest
   * visible scrollable box that can (pages whose content scrolls inside a container).
   */
  function scroll(direction: 1 | -1): boolean {
    const delta = direction * Math.round((window.innerHeight * 2) / 3);
    const canMove = (el: Element) =>
      direction > 0 ? el.scrollTop + el.clientHeight < el.scrollHeight - 1 : el.scrollTop > 0;
    const page = document.scrollingElement;
    if (page && canMove(page)) {
      window.scrollBy({ top: delta, behavior: 'instant' });
      return true;
    }
    let best: Element | null = null;
    let bestArea = 0;
    for (const el of Array.from(document.querySelectorAll('*'))) {
      if (el.scrollHeight <= el.clientHeight || !canMove(el)) continue;
      const overflow = getComputedStyle(el).overflowY;
      if (overflow !== 'auto' && overflow !== 'scroll') continue;
      const area = el.clientWidth * el.clientHeight;
      if (area > bestArea) {
        best = el;
        bestArea = area;
      }
    }
    best?.scrollBy({ top: delta, behavior: 'instant' });
    return best !== null;
  }

  /**
   * Resolves once the DOM (and same-origin iframes) went `quietMs` without a mutation other than our own
   * marks, or after `capMs`. Waits for DOMContentLoaded first while the document is still parsing.
   */
  function waitForQuiet(quietMs: number, capMs: number): Promise<{ quiet: boolean }> {
    return new Promise((resolve) => {
      const start = performance.now();
      let last = start;
      const observer = new MutationObserver((records) => {
        if (records.some((r) => r.type !== 'attributes' || r.attributeName !== MARK)) last = performance.now();
      });
      const options = { subtree: true, childList: true, attributes: true, characterData: true };
      const watch = (frame: FrameInfo) => {
        observer.observe(frame.doc, options);
        for (const iframe of Array.from(frame.doc.querySelectorAll('iframe'))) {
          const child = childFrame(iframe, frame);
          if (child) watch(child);
        }
      };
      const check = () => {
        const now = performance.now();
        const idle = now - last;
        if (idle >= quietMs || now - start >= capMs) {
          observer.disconnect();
          resolve({ quiet: idle >= quietMs });
        } else {
          setTimeout(check, Math.min(quietMs - idle, capMs - (now - start)));
        }
      };
      let parsingCap: ReturnType<typeof setTimeout> | undefined;
      const begin = () => {
        clearTimeout(parsingCap);
        watch(topFrame());
        last = performance.now();
        setTimeout(check, Math.min(quietMs, Math.max(0, capMs - (last - start))));
      };
      if (document.readyState !== 'loading') begin();
      else {
        document.addEventListener('DOMContentLoaded', begin, { once: true });
        parsingCap = setTimeout(() => {
          document.removeEventListener('DOMContentLoaded', begin);
          resolve({ quiet: false });
        }, capMs);
      }
    });
  }

  return { annotate, locate, selectOption, scroll, waitForQuiet };
}

export type PageRuntime = ReturnType<typeof createPageRuntime>;
