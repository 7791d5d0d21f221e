/**
 * The code that runs inside the page: annotation (webrl.md §2), element lookup for the executor, dropdown
 * selection, scrolling and DOM-quiet detection. `createPageRuntime` is serialised with `toString()` and
 * evaluated in the page (see pageCall.ts), so it must reference nothing outside itself: no imports, no
 * module constants; types are fine (they vanish).
 *
 * Two observation profiles (docs/webrl-fidelity.md): `default`, this project's annotation, and `webrl`,
 * the annotation of the reference harness the released WebRL checkpoints were trained on (which elements
 * get ids, which attributes with which values, the leading text only, which wrappers print).
 *
 * Frames: same-origin iframes are walked as part of the page (their content sits inside the `<iframe>`
 * node, ids continue in document order, boxes are in top-viewport coordinates). Cross-origin iframes
 * cannot be read from the page; each is one opaque clickable `<iframe>`. Shadow DOM is not entered.
 */
import type { ObservedElement } from './contract';

/** Which annotator the model reads: this project's (`default`) or the WebRL reference harness's (`webrl`). */
export type ObservationProfile = 'default' | 'webrl';

/** One printed element of the annotated tree; strings are visible text runs. */
export interface AnnotatedNode {
  tag: string;
  /** The element id the model refers to (clickables only). */
  id?: number;
  /** Candidate printable attributes (webrl.md §2 whitelist), values already whitespace-collapsed. */
  attrs: Record<string, string>;
  children: (AnnotatedNode | string)[];
  /** Always printed even when it carries nothing itself (the document's html and body; default profile). */
  structural?: boolean;
  /** webrl: the text before the element's first child element, the only text the reference prints as content. */
  lead?: string;
  /** webrl: how many child elements hold printable content somewhere below them, shown or not. */
  filled?: number;
  /** webrl: aria-hidden; printed only when it carries an id. */
  ariaHidden?: boolean;
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

/**
 * The text field a Type action writes into: `keys` fields take typed characters, `picker` fields (date,
 * time, colour, range, ...) have a value set whole; `type` is the input's type, `textarea` or
 * `contenteditable`; `value` the field's value (an editable element's text) as it is now.
 */
export interface FieldState {
  kind: 'keys' | 'picker';
  type: string;
  value: string;
  /** Drawn where a person sees it; a field that is not only forwards keys to the page's script. */
  shown: boolean;
}

export function createPageRuntime() {
  const MARK = 'data-webrl-id';
  const MAX_CHARS = 500;
  const INTERACTIVE_TAGS = new Set(['a', 'button', 'input', 'select', 'textarea', 'iframe', 'details', 'summary']);
  const INTERACTIVE_ROLES = new Set([
    'button',
    'link',
    'tab',
    'checkbox',
    'radio',
    'menuitem',
    'menuitemcheckbox',
    'menuitemradio',
    'option',
    'switch',
    'combobox',
    'textbox',
    'searchbox',
    'slider',
    'spinbutton',
    'treeitem',
  ]);
  const SKIPPED_TAGS = new Set(['script', 'style', 'noscript', 'template', 'head', 'meta', 'link', 'title']);
  /** webrl: what the reference's clickable test accepts by tag and by role; it strips scripts and styles before parsing. */
  const WEBRL_TAGS = new Set(['input', 'textarea', 'select', 'button', 'a', 'iframe', 'video', 'object', 'embed', 'details']);
  const WEBRL_ROLES = new Set(['button', 'tab', 'link', 'checkbox', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'radio']);
  const REMOVED_TAGS = new Set(['script', 'style']);
  /** Icon class names (`fa-cart`, `icon-search`, jQuery UI's `ui-icon-close`) and the modifiers among them that name no icon. */
  const ICON_CLASS = /^(?:fa[a-z]?|icons?|glyphicon|bi|mdi|ti|ion|la|ui-icon)-(.+)$/;
  const ICON_MODIFIER = /^(?:lg|xs|sm|\d+x|fw|solid|regular|light|brands|inverse|spin|pulse|border|stack.*)$/;
  /** A directional icon's name (jQuery UI's `triangle-1-n`, `circle-arrow-e`, `caret-1-e`): its kind and compass point. */
  const DIRECTIONAL_ICON =
    /^(?:circle-|circlesmall-)?(?:triangle|arrow|arrowthick|arrowstop|arrowthickstop|carat|caret|arrowreturn|arrowreturnthick)(?:-\d)?-(n|ne|e|se|s|sw|w|nw|n-s|e-w)$/;
  const COMPASS: Record<string, string> = {
    n: 'up',
    ne: 'up right',
    e: 'right',
    se: 'down right',
    s: 'down',
    sw: 'down left',
    w: 'left',
    nw: 'up left',
    'n-s': 'up down',
    'e-w': 'left right',
  };
  /** A trailing word of an image's file name that names the state it is drawn in (`reply-hover.png`), not the icon. */
  const STATE_SUFFIX = / (?:hover|hovered|active|focus|focused|pressed)$/;
  /** Events whose listeners make an element clickable (recorded by installListenerProbe). */
  const CLICK_EVENTS = ['click', 'dblclick', 'mousedown', 'mouseup', 'pointerdown', 'pointerup'];

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

  /** Whether the boxes meet, an edge or a corner being enough (a box of no size inside `b` meets it). */
  function touches(a: Rect, b: Rect): boolean {
    return a.left <= b.right && b.left <= a.right && a.top <= b.bottom && b.top <= a.bottom;
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
    for (let node: Element = el; clip;) {
      if (frame.win.getComputedStyle(node).position === 'fixed') break;
      const parent = node.parentElement;
      if (!parent) break;
      if (clipsContent(frame.win.getComputedStyle(parent))) clip = intersect(clip, boxIn(frame, parent.getBoundingClientRect()));
      node = parent;
    }
    return clip;
  }

  /** The centre of `visible` (top-viewport), if that point hit-tests to the element or a descendant. */
  function hitCentre(el: Element, frame: FrameInfo, visible: Rect): ClickTarget | null {
    const x = (visible.left + visible.right) / 2;
    const y = (visible.top + visible.bottom) / 2;
    const hit = frame.doc.elementFromPoint(x - frame.dx, y - frame.dy);
    if (!hit || !el.contains(hit) || !pointReaches(frame, x, y)) return null;
    return { x, y, opensTab: opensTab(hit) };
  }

  /** Centre of the element's visible part, if that point hit-tests to the element or a descendant. */
  function clickPoint(el: Element, frame: FrameInfo): ClickTarget | null {
    const clip = clipFor(el, frame);
    const visible = clip && intersect(boxIn(frame, el.getBoundingClientRect()), clip);
    return visible ? hitCentre(el, frame, visible) : null;
  }

  /** The first of the element's boxes (an inline element has one per line) whose visible centre hit-tests to it. */
  function lineClickPoint(el: Element, frame: FrameInfo): ClickTarget | null {
    const clip = clipFor(el, frame);
    for (const rect of clip ? Array.from(el.getClientRects()) : []) {
      const visible = intersect(boxIn(frame, rect), clip!);
      const point = visible && hitCentre(el, frame, visible);
      if (point) return point;
    }
    return null;
  }

  /** Where a click reaches the element: the centre of its visible part, else the first line box whose centre does. */
  function reachablePoint(el: Element, frame: FrameInfo): ClickTarget | null {
    return clickPoint(el, frame) ?? lineClickPoint(el, frame);
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

  /**
   * Whether the page's scripts listen for clicks (or presses) on the element itself, as recorded by the
   * init script installListenerProbe (absent where it was not installed). The document's html and body
   * are left out: listeners there serve the whole page (delegation), not one control.
   */
  function listensForClicks(el: Element, tag: string): boolean {
    if (tag === 'html' || tag === 'body') return false;
    const win = el.ownerDocument.defaultView as (Window & { __webrlListeners?: WeakMap<EventTarget, Map<string, Set<unknown>>> }) | null;
    const types = win?.__webrlListeners?.get(el);
    return types !== undefined && CLICK_EVENTS.some((type) => (types.get(type)?.size ?? 0) > 0);
  }

  function isClickable(el: Element, tag: string, style: CSSStyleDeclaration, parentPointer: boolean): boolean {
    if (INTERACTIVE_TAGS.has(tag)) return true;
    const role = el.getAttribute('role');
    if (role && INTERACTIVE_ROLES.has(role.trim().toLowerCase())) return true;
    if (el.hasAttribute('onclick') || typeof (el as HTMLElement).onclick === 'function') return true;
    if (listensForClicks(el, tag)) return true;
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

  /** Whether the element holds text that prints (not inside a title, script or style, which the walk skips). */
  function shownText(el: Element): boolean {
    const walker = el.ownerDocument.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (collapse(node.nodeValue ?? '') && !SKIPPED_TAGS.has(node.parentElement?.localName ?? '')) return true;
    }
    return false;
  }

  function referencedText(doc: Document, ids: string): string {
    return collapse(
      ids
        .split(/\s+/)
        .map((id) => (id ? (doc.getElementById(id)?.textContent ?? '') : ''))
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
    put('data-value', tag === 'select' ? ((el as HTMLSelectElement).selectedOptions[0]?.text ?? '') : el.getAttribute('data-value'));
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

  /** A `jsaction` attribute that binds a click to a named action (the reference counts those as clickable). */
  function bindsClick(el: Element): boolean {
    const value = el.getAttribute('jsaction');
    if (!value) return false;
    return value.split(';').some((rule) => {
      const parts = rule.trim().split(':');
      if (parts.length > 2) return false;
      const [event, target] = parts.length === 1 ? ['click', parts[0] ?? ''] : [parts[0] ?? '', parts[1] ?? ''];
      const [namespace, action = '_'] = target.trim().split('.');
      return event === 'click' && namespace !== 'none' && action !== '_';
    });
  }

  /**
   * webrl: the reference's clickable test; the cursor counts even when inherited, so ids sink to the
   * innermost boxes. Beyond the reference: an element the page's scripts listen on for clicks.
   */
  function isClickableWebrl(el: Element, tag: string, style: CSSStyleDeclaration): boolean {
    if ((el as HTMLElement).onclick != null || style.cursor === 'pointer' || listensForClicks(el, tag)) return true;
    const map = tag === 'img' ? el.getAttribute('usemap') : null;
    if (map && el.ownerDocument.querySelector(`map[name="${CSS.escape(map.replace(/^#/, ''))}"]`)) return true;
    const role = el.getAttribute('role');
    if (role !== null && WEBRL_ROLES.has(role.toLowerCase())) return true;
    const editable = el.getAttribute('contenteditable');
    if (editable !== null && ['', 'contenteditable', 'true'].includes(editable.toLowerCase())) return true;
    if (bindsClick(el) || WEBRL_TAGS.has(tag)) return true;
    if (tag === 'label') {
      const control = (el as HTMLLabelElement).control as HTMLInputElement | null;
      if (control && !control.disabled) return true;
    }
    if (tag === 'img' && ['zoom-in', 'zoom-out'].includes((el as HTMLElement).style.cursor)) return true;
    if ((el.getAttribute('class') ?? '').toLowerCase().includes('button')) return true;
    const tabindex = parseInt(el.getAttribute('tabindex') ?? '', 10);
    return !Number.isNaN(tabindex) && tabindex >= 0;
  }

  /** webrl: the element's own text runs, each whitespace-collapsed, joined with commas (its `data-text`). */
  function textRuns(el: Element): string {
    const runs: string[] = [];
    for (const child of Array.from(el.childNodes)) {
      const run = child.nodeType === Node.TEXT_NODE ? collapse(child.nodeValue ?? '') : '';
      if (run) runs.push(run);
    }
    return runs.join(',');
  }

  /** webrl: the text before the element's first child element (comments, scripts and styles do not end it). */
  function leadText(el: Element): string {
    let text = '';
    for (const child of Array.from(el.childNodes)) {
      if (child.nodeType === Node.TEXT_NODE) text += child.nodeValue ?? '';
      else if (child.nodeType === Node.ELEMENT_NODE && !REMOVED_TAGS.has((child as Element).tagName.toLowerCase())) break;
    }
    return collapse(text).slice(0, MAX_CHARS);
  }

  /** webrl: the box the reference prints, the element's first box (line) with its edges rounded. */
  function firstBox(el: Element, frame: FrameInfo): string | null {
    const rect = el.getClientRects()[0];
    if (!rect) return null;
    const left = Math.round(rect.left + frame.dx);
    const top = Math.round(rect.top + frame.dy);
    return `${left},${top},${Math.round(rect.right + frame.dx) - left},${Math.round(rect.bottom + frame.dy) - top}`;
  }

  /**
   * webrl: the reference's attributes and values (docs/webrl-fidelity.md): markup attributes as written,
   * `data-value` the live value of a field or a select's value, `data-text` the own text runs (a select's
   * chosen option), `data-status` a checkbox's state or the chosen option. A password's value is left out.
   */
  function webrlAttributes(el: Element, tag: string, box: string | null): Record<string, string> {
    const attrs: Record<string, string> = {};
    const put = (name: string, value: string | null | undefined) => {
      const clean = value == null ? '' : collapse(value).slice(0, MAX_CHARS);
      if (clean) attrs[name] = clean;
    };
    const type = el.getAttribute('type');
    const secret = tag === 'input' && (el as HTMLInputElement).type === 'password';
    let dataValue = el.getAttribute('data-value');
    let dataText = el.hasChildNodes() ? textRuns(el) : el.getAttribute('data-text');
    let status = el.getAttribute('data-status');
    if (tag === 'input' || tag === 'textarea') dataValue = secret ? null : (el as HTMLInputElement).value;
    if (tag === 'input' && type === 'checkbox') status = (el as HTMLInputElement).checked ? 'checked' : 'not-checked';
    if (tag === 'select') {
      const select = el as HTMLSelectElement;
      dataValue = select.value;
      dataText = select.options[select.selectedIndex]?.text ?? '';
    }
    if (tag === 'option') {
      const select = el.closest('select');
      if (select && select.options[select.selectedIndex] === el) status = 'selected';
    }
    put('title', el.getAttribute('title'));
    if (!secret) put('value', el.getAttribute('value'));
    if (type !== 'hidden') put('type', type);
    put('placeholder', el.getAttribute('placeholder'));
    put('selected', el.getAttribute('selected'));
    put('data-value', dataValue);
    put('data-text', dataText);
    put('data-testid', el.getAttribute('data-testid'));
    put('data-label', el.getAttribute('data-label'));
    if (box) attrs['data-bbox'] = box;
    put('data-status', status);
    return attrs;
  }

  /** webrl: whether anything under `root` (itself included, shown or not) has text or a printable attribute. */
  function holdsContent(root: Element): boolean {
    const walker = root.ownerDocument.createTreeWalker(root, NodeFilter.SHOW_ELEMENT, {
      acceptNode: (node) => (REMOVED_TAGS.has((node as Element).tagName.toLowerCase()) ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT),
    });
    for (let node: Node | null = root; node; node = walker.nextNode()) {
      const el = node as Element;
      if (Object.keys(webrlAttributes(el, el.tagName.toLowerCase(), null)).length > 0) return true;
    }
    return false;
  }

  /** A readable name from an image URL: its file name without extension, separators as spaces. */
  function fileName(url: string): string {
    if (!url || url.startsWith('data:')) return '';
    const path = url.split(/[?#]/)[0] ?? '';
    let stem = path.slice(path.lastIndexOf('/') + 1).replace(/\.[a-z0-9]+$/i, '');
    try {
      stem = decodeURIComponent(stem);
    } catch {
      // Keep the raw name.
    }
    return collapse(stem.replace(/[-_.]+/g, ' ')).replace(STATE_SUFFIX, '');
  }

  /** The icon an element shows through CSS (a background or mask image, or an image as its `content`), by file name. */
  function cssImageName(style: CSSStyleDeclaration): string {
    for (const property of ['background-image', 'mask-image', '-webkit-mask-image', 'content']) {
      for (const match of style.getPropertyValue(property).matchAll(/url\(\s*(['"]?)(.*?)\1\s*\)/g)) {
        const name = fileName(match[2] ?? '');
        if (name) return name;
      }
    }
    return '';
  }

  /** The icon an icon class names (`fa-cart` "cart", `ui-icon-triangle-1-n` "up arrow"); '' when no class does. */
  function iconClassName(node: Element): string {
    for (const token of Array.from(node.classList)) {
      const match = ICON_CLASS.exec(token.toLowerCase());
      if (!match || ICON_MODIFIER.test(match[1]!)) continue;
      const direction = DIRECTIONAL_ICON.exec(match[1]!)?.[1];
      if (direction) return `${COMPASS[direction]} arrow`;
      // jQuery UI's close icon is `closethick` (its other weight `close`).
      return collapse(match[1]!.replace(/thick$/, '').replace(/[-_]+/g, ' '));
    }
    return '';
  }

  /**
   * What names the icon `node` shows: an icon class first (a sprite sheet's file names every icon on it),
   * then a CSS image (its own or a pseudo-element's), an image file or an SVG symbol.
   */
  function imageName(node: Element, win: Window): string {
    const named = iconClassName(node);
    if (named) return named;
    for (const pseudo of [null, '::before', '::after']) {
      const name = cssImageName(win.getComputedStyle(node, pseudo));
      if (name) return name;
    }
    const tag = node.tagName.toLowerCase();
    if (tag === 'img') return fileName(node.getAttribute('src') ?? '');
    if (tag === 'use') {
      const href = node.getAttribute('href') ?? node.getAttribute('xlink:href') ?? '';
      return collapse(href.slice(href.indexOf('#') + 1).replace(/[-_.]+/g, ' '));
    }
    return '';
  }

  /**
   * A name for an element with an id and no shown text, whose only content is an icon (docs/webrl-fidelity.md):
   * nothing for a form field or when the profile already prints a label for it or inside it; else an
   * ARIA label, an image's alt, an SVG title the profile does not print, then the icon's file or class name.
   */
  function iconLabel(el: Element, tag: string, win: Window, webrl: boolean): string {
    if (tag === 'input' || tag === 'select' || tag === 'textarea' || tag === 'iframe' || shownText(el)) return '';
    if (!webrl && labelOf(el)) return '';
    const nodes = [el, ...Array.from(el.querySelectorAll('*')).slice(0, 50)];
    const readable = webrl
      ? ['title', 'value', 'placeholder', 'data-value', 'data-label']
      : ['title', 'value', 'placeholder', 'data-label', 'aria-label', 'alt'];
    if (nodes.some((node) => readable.some((name) => collapse(node.getAttribute(name) ?? '')))) return '';
    for (const node of nodes) {
      const svgTitle = node.localName === 'title' && node.namespaceURI === 'http://www.w3.org/2000/svg' ? node.textContent : null;
      const name = collapse(node.getAttribute('aria-label') || node.getAttribute('alt') || svgTitle || '');
      if (name) return name;
    }
    const labelledBy = el.getAttribute('aria-labelledby');
    const referenced = labelledBy ? referencedText(el.ownerDocument, labelledBy) : '';
    if (referenced) return referenced;
    for (const node of nodes) {
      const name = imageName(node, win);
      if (name) return name;
    }
    return '';
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

  function annotate(profile: ObservationProfile = 'default'): AnnotationResult {
    const webrl = profile === 'webrl';
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
      /** webrl: the subtree holds printable content, shown or not (it counts toward the parent's `filled`). */
      content: boolean;
      /** default: boxes under a pointer wrapper, each a candidate for its own id (see `pointerItem`). */
      items: Slot[];
    }
    const nothing = (content = false): Walk => ({ out: [], clickable: false, content, items: [] });

    /**
     * `shown`: no transparent ancestor; text runs also need their parent's visibility (children may override
     * it). `pointer`: the parent's cursor is a pointer; `wrapper`: set by an element that is no control.
     */
    function walkChildren(
      parent: Element,
      frame: FrameInfo,
      clip: Rect,
      pointer: boolean,
      wrapper: boolean,
      shown: boolean,
      textVisible: boolean,
    ): Walk & { filled: number } {
      const out: (AnnotatedNode | string)[] = [];
      const items: Slot[] = [];
      let clickable = false;
      let filled = 0;
      for (const child of Array.from(parent.childNodes)) {
        if (child.nodeType === Node.TEXT_NODE) {
          // webrl prints an element's leading text only (AnnotatedNode.lead).
          const text = webrl ? '' : cut(collapse(child.nodeValue ?? ''));
          if (text && textVisible && textRunVisible(child as Text, frame, clip)) out.push(text);
        } else if (child.nodeType === Node.ELEMENT_NODE) {
          const walked = walkElement(child as Element, frame, clip, pointer, wrapper, shown);
          out.push(...walked.out);
          clickable ||= walked.clickable;
          if (walked.content) filled++;
          items.push(...walked.items);
        }
      }
      return { out, clickable, content: filled > 0, items, filled };
    }

    function walkOptions(select: HTMLSelectElement): AnnotatedNode[] {
      return Array.from(select.options, (option) => ({
        tag: 'option',
        attrs: printedAttributes(option, 'option', null),
        children: collapse(option.text) ? [cut(collapse(option.text))] : [],
      }));
    }

    /** webrl: the select's own options (the reference prints none inside an optgroup). */
    function webrlOptions(select: HTMLSelectElement): AnnotatedNode[] {
      return Array.from(select.children)
        .filter((child) => child.tagName === 'OPTION')
        .map((option) => ({ tag: 'option', attrs: webrlAttributes(option, 'option', null), lead: leadText(option), children: [] }));
    }

    /**
     * default: a box inside a pointer wrapper that inherits the cursor, shows text or an image and can be
     * clicked; when a wrapper holds two or more, each gets an id instead of the wrapper (a toolbar, a list).
     */
    function pointerItem(el: Element, style: CSSStyleDeclaration, frame: FrameInfo): boolean {
      // An element drawn as an image with `content: url(...)` is an icon even when inline, as an <img> is.
      const drawnImage = /url\(/.test(style.content);
      if (!drawnImage && (style.display === 'inline' || style.display === 'contents')) return false;
      if (!drawnImage && !allText(el) && !el.querySelector('img, svg') && style.backgroundImage === 'none') return false;
      return clickPoint(el, frame) !== null;
    }

    function isControl(el: Element, tag: string): boolean {
      const role = el.getAttribute('role');
      return INTERACTIVE_TAGS.has(tag) || (role !== null && INTERACTIVE_ROLES.has(role.trim().toLowerCase()));
    }

    function walkElement(el: Element, frame: FrameInfo, clip: Rect, parentPointer: boolean, inWrapper: boolean, parentShown: boolean): Walk {
      const tag = el.tagName.toLowerCase();
      if (REMOVED_TAGS.has(tag)) return nothing();
      if (SKIPPED_TAGS.has(tag)) return nothing(webrl && holdsContent(el));
      const style = frame.win.getComputedStyle(el);
      const structural = frame.doc === document && (tag === 'html' || tag === 'body');
      // checkVisibility() is false for display:none and for content skipped by content-visibility (a
      // closed <details>): nothing below renders either.
      if (!structural && (style.display === 'none' || !el.checkVisibility())) return nothing(webrl && holdsContent(el));
      const box = boxIn(frame, el.getBoundingClientRect());
      // A fixed box escapes the clipping of its ancestors.
      const ownClip = style.position === 'fixed' ? frame.clip : clip;
      // Opacity does not inherit in computed style, so transparency is carried down the walk.
      const shown = parentShown && Number(style.opacity) !== 0;
      // webrl, as the reference: a box of no size shows when it lies in view; an element without boxes never does.
      const inView = webrl ? el.getClientRects().length > 0 && touches(box, ownClip) : intersect(box, ownClip) !== null;
      const visible = shown && style.visibility === 'visible' && inView;
      const printed = visible || structural;
      let attrs: Record<string, string> = {};
      if (webrl) attrs = webrlAttributes(el, tag, printed ? firstBox(el, frame) : null);
      else if (printed) attrs = printedAttributes(el, tag, box);
      const node: AnnotatedNode = { tag, attrs, children: [] };
      if (structural) node.structural = true;
      if (webrl) {
        node.lead = leadText(el);
        if (el.getAttribute('aria-hidden') === 'true') node.ariaHidden = true;
      }

      const pointer = style.cursor === 'pointer';
      const introducesPointer = pointer && !parentPointer;
      // default: a pointer wrapper's boxes may get ids of their own; a link's or a button's never do.
      const wrapper = !webrl && pointer && (introducesPointer ? !isControl(el, tag) : inWrapper);
      let slot: Slot | null = null;
      let item: Slot | null = null;
      if (visible && webrl) {
        if (isClickableWebrl(el, tag, style) && reachablePoint(el, frame)) slot = { el, tag, frame, node, keep: true };
      } else if (visible) {
        if (isClickable(el, tag, style, parentPointer) && reachablePoint(el, frame)) slot = { el, tag, frame, node, keep: true };
        else if (wrapper && !introducesPointer && pointerItem(el, style, frame)) item = { el, tag, frame, node, keep: false };
      }
      if (slot) slots.push(slot);
      if (item) slots.push(item);

      const childClip = clipsContent(style) ? (intersect(ownClip, box) ?? EMPTY) : ownClip;
      let inner: Walk & { filled: number };
      if (tag === 'select') {
        const options = visible ? (webrl ? webrlOptions(el as HTMLSelectElement) : walkOptions(el as HTMLSelectElement)) : [];
        const filled = webrl ? Array.from(el.children).filter(holdsContent).length : 0;
        inner = { out: options, clickable: false, content: filled > 0, items: [], filled };
      } else if (tag === 'iframe') {
        const child = childFrame(el as HTMLIFrameElement, frame);
        if (child) documents.push(child.doc);
        const walked = child ? walkElement(child.doc.documentElement, child, child.clip, false, false, shown) : nothing();
        inner = { ...walked, filled: walked.content ? 1 : 0 };
      } else {
        inner = walkChildren(el, frame, childClip, pointer, wrapper, shown, shown && style.visibility === 'visible');
      }
      let innerClickable = inner.clickable;
      // An item holding clickables or items is not the innermost: those stand for it.
      let items = item && !inner.clickable && inner.items.length === 0 ? [item] : inner.items;
      // The wrapper decides for its boxes; a clickable between them and it stands for them.
      if (introducesPointer && wrapper && items.length >= 2) {
        for (const each of items) each.keep = true;
        innerClickable = true;
      }
      if (introducesPointer || slot) items = [];
      // Only the innermost of nested clickables keeps an id.
      if (slot && innerClickable) slot.keep = false;
      const clickable = innerClickable || slot !== null;
      const content = webrl && (inner.filled > 0 || Object.keys(attrs).some((name) => name !== 'data-bbox'));
      if (!printed) return { out: inner.out, clickable, content, items };
      node.children = inner.out;
      if (webrl) node.filled = inner.filled;
      return { out: [node], clickable, content, items };
    }

    const frame = topFrame();
    documents.push(document);
    // The top html element is structural, so the walk yields exactly that node.
    const root = walkElement(document.documentElement, frame, frame.clip, false, false, true).out[0] as AnnotatedNode;

    const elements: AnnotatedElement[] = [];
    const marked = new Set<Element>();
    for (const slot of slots) {
      if (!slot.keep) continue;
      const id = elements.length;
      slot.node.id = id;
      const described = describe(slot.el, slot.tag, id, slot.frame);
      elements.push(described);
      const icon = iconLabel(slot.el, slot.tag, slot.frame.win, webrl);
      if (icon) slot.node.attrs[webrl ? 'title' : 'data-label'] = cut(icon);
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
    const point = reachablePoint(found.el, found.frame);
    if (point) return point;
    found.el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
    const again = findMarked(id);
    return again && reachablePoint(again.el, again.frame);
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
   * Scrolls by 2/3 of the height of what moves, so a third of what showed stays in view and nothing is
   * skipped: the document (by the viewport's height) when it can move that way, otherwise the largest
   * scrollable box that can (pages whose content scrolls inside a container), by that box's height.
   * False when nothing can move that way.
   */
  function scroll(direction: 1 | -1): boolean {
    const canMove = (el: Element) => (direction > 0 ? el.scrollTop + el.clientHeight < el.scrollHeight - 1 : el.scrollTop > 0);
    const share = (height: number) => direction * Math.max(1, Math.round((height * 2) / 3));
    const page = document.scrollingElement;
    if (page && canMove(page)) {
      window.scrollBy({ top: share(window.innerHeight), behavior: 'instant' });
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
    best?.scrollBy({ top: share(best.clientHeight), behavior: 'instant' });
    return best !== null;
  }

  /** What installTimerProbe records in a document; absent where it was not installed. */
  interface TimerProbe {
    /** Pending timeouts: id -> when due (performance.now() time). */
    timeouts: Map<number, number>;
    /** Pending animation-frame callbacks. */
    frames: Set<number>;
    /** The page's setTimeout before the probe wrapped it: our own checks are not the page's work. */
    setTimeout: (handler: () => void, ms: number) => number;
  }
  const probeOf = (win: Window): TimerProbe | undefined => (win as unknown as { __webrlTimers?: TimerProbe }).__webrlTimers;

  /**
   * Resolves once the DOM (and same-origin iframes) went `quietMs` without a mutation other than our own
   * marks, no timeout the page scheduled is due and no animation frame is pending before `horizonMs` from
   * now (timers recorded by installTimerProbe), and `minWaitMs` passed; or after `capMs` (and `minWaitMs`).
   * Waits for DOMContentLoaded first while the document is still parsing.
   */
  function waitForQuiet(quietMs: number, capMs: number, minWaitMs = 0, horizonMs = 0): Promise<{ quiet: boolean }> {
    const later = probeOf(window)?.setTimeout ?? ((handler: () => void, ms: number) => window.setTimeout(handler, ms));
    return new Promise((resolve) => {
      const start = performance.now();
      const horizon = start + horizonMs;
      const end = start + Math.max(capMs, minWaitMs);
      let last = start;
      const windows: Window[] = [];
      const observer = new MutationObserver((records) => {
        if (records.some((r) => r.type !== 'attributes' || r.attributeName !== MARK)) last = performance.now();
      });
      const options = { subtree: true, childList: true, attributes: true, characterData: true };
      const watch = (frame: FrameInfo) => {
        observer.observe(frame.doc, options);
        windows.push(frame.win);
        for (const iframe of Array.from(frame.doc.querySelectorAll('iframe'))) {
          const child = childFrame(iframe, frame);
          if (child) watch(child);
        }
      };
      /** When to look again for the page's scheduled work due within the horizon; null when there is none. */
      const scheduled = (now: number): number | null => {
        if (now >= horizon) return null;
        let next = Number.POSITIVE_INFINITY;
        for (const win of windows) {
          const probe = probeOf(win);
          if (!probe) continue;
          if (probe.frames.size > 0) next = Math.min(next, now + 16);
          for (const due of probe.timeouts.values()) if (due <= horizon) next = Math.min(next, Math.max(due, now) + 1);
        }
        return Number.isFinite(next) ? next : null;
      };
      const check = () => {
        const now = performance.now();
        const pending = scheduled(now);
        const quiet = now - last >= quietMs && pending === null;
        if ((quiet && now - start >= minWaitMs) || now >= end) {
          observer.disconnect();
          resolve({ quiet });
          return;
        }
        let wake = end;
        if (now - last < quietMs) wake = Math.min(wake, last + quietMs);
        if (pending !== null) wake = Math.min(wake, pending);
        if (quiet) wake = Math.min(wake, start + minWaitMs);
        later(check, Math.max(1, wake - now));
      };
      let parsingCap: number | undefined;
      const begin = () => {
        clearTimeout(parsingCap);
        watch(topFrame());
        last = performance.now();
        later(check, Math.max(0, Math.min(quietMs, end - last)));
      };
      if (document.readyState !== 'loading') begin();
      else {
        document.addEventListener('DOMContentLoaded', begin, { once: true });
        parsingCap = later(() => {
          document.removeEventListener('DOMContentLoaded', begin);
          resolve({ quiet: false });
        }, end - start);
      }
    });
  }

  /** Input types a keyboard types into as text. */
  const KEYED_TYPES = new Set(['text', 'search', 'email', 'password', 'url', 'tel', 'number']);
  /** Input types a browser edits through a picker, segments or a handle: their value is set whole. */
  const PICKED_TYPES = new Set(['date', 'time', 'datetime-local', 'month', 'week', 'color', 'range']);
  type FieldWindow = Window & { __webrlField?: Element };

  function fieldKind(el: Element | null): FieldState['kind'] | null {
    if (!el) return null;
    if (el.localName === 'textarea') return 'keys';
    if (el.localName === 'input') {
      const type = (el as HTMLInputElement).type;
      return KEYED_TYPES.has(type) ? 'keys' : PICKED_TYPES.has(type) ? 'picker' : null;
    }
    return (el as HTMLElement).isContentEditable ? 'keys' : null;
  }

  function fieldStateOf(el: Element): FieldState {
    const kind = fieldKind(el) ?? 'keys';
    const style = getComputedStyle(el);
    const box = el.getBoundingClientRect();
    // A field drawn invisible (MiniWoB++'s terminal: opacity 0, 1 px) only carries keys to a script that shows them elsewhere.
    const shown = style.visibility !== 'hidden' && Number(style.opacity) > 0 && box.width > 2 && box.height > 2;
    if (el.localName === 'input') return { kind, type: (el as HTMLInputElement).type, value: (el as HTMLInputElement).value, shown };
    if (el.localName === 'textarea') return { kind, type: 'textarea', value: (el as HTMLTextAreaElement).value, shown };
    return { kind, type: 'contenteditable', value: (el as HTMLElement).innerText, shown };
  }

  /** The focused element, looking into same-origin iframes. */
  function deepActiveElement(): Element | null {
    let el = document.activeElement;
    while (el && el.localName === 'iframe') {
      let inner: Element | null = null;
      try {
        inner = (el as HTMLIFrameElement).contentDocument?.activeElement ?? null;
      } catch {
        return el;
      }
      if (!inner) return el;
      el = inner;
    }
    return el;
  }

  /**
   * After a Type action's click on element `id`: the text field that has focus, or element `id` itself
   * (focused now) when it is one and the click left focus elsewhere; null when neither is a text field.
   * The field is remembered for fieldState and setFieldValue.
   */
  function focusField(id: number): FieldState | null {
    let el = deepActiveElement();
    if (!fieldKind(el)) {
      const marked = findMarked(id)?.el ?? null;
      if (!marked || !fieldKind(marked)) return null;
      (marked as HTMLElement).focus();
      el = marked;
    }
    (window as FieldWindow).__webrlField = el!;
    return fieldStateOf(el!);
  }

  /** The remembered field as it is now; null when it left the page. */
  function fieldState(): FieldState | null {
    const el = (window as FieldWindow).__webrlField;
    return el?.isConnected ? fieldStateOf(el) : null;
  }

  /** A CSS colour (`red`, `#f00`, `rgb(255 0 0)`) as a colour input's value (`#ff0000`); null when it is none. */
  function colourValue(doc: Document, colour: string): string | null {
    const context = doc.createElement('canvas').getContext('2d');
    if (!context) return null;
    const read = (fallback: string) => {
      context.fillStyle = fallback;
      context.fillStyle = colour.trim();
      return String(context.fillStyle);
    };
    const value = read('#000000');
    // An unknown colour leaves the fallback in place: with two fallbacks it cannot pass unseen.
    return value === read('#ffffff') && /^#[0-9a-f]{6}$/.test(value) ? value : null;
  }

  /**
   * Sets the remembered picker field's value whole, as its picker would (the prototype's setter, so
   * frameworks that track the value see it, then input and change events), and returns the value asked
   * for (a colour in the input's syntax) and the field as it is now; null when the field left the page.
   */
  function setFieldValue(value: string): { wanted: string; field: FieldState } | null {
    const el = (window as FieldWindow).__webrlField as HTMLInputElement | undefined;
    if (!el?.isConnected) return null;
    const wanted = el.type === 'color' ? (colourValue(el.ownerDocument, value) ?? value) : value;
    const setter = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(el) as object, 'value')?.set;
    if (setter) setter.call(el, wanted);
    else el.value = wanted;
    el.dispatchEvent(new Event('input', { bubbles: true }));
    el.dispatchEvent(new Event('change', { bubbles: true }));
    return { wanted, field: fieldStateOf(el) };
  }

  return { annotate, locate, selectOption, scroll, waitForQuiet, focusField, fieldState, setFieldValue };
}

export type PageRuntime = ReturnType<typeof createPageRuntime>;

/**
 * Runs in every document of an episode's browser context before the page's own scripts (pageCall.ts
 * serialises it like the runtime): records, per element, the listeners the page's scripts add for each
 * event type (`addEventListener`, which jQuery's bindings use too), so the annotation can give an id to
 * a control that is clickable only through a script (a `<span>` icon with a click handler).
 */
export function installListenerProbe(): void {
  if ('__webrlListeners' in window) return;
  const listeners = new WeakMap<EventTarget, Map<string, Set<unknown>>>();
  Object.defineProperty(window, '__webrlListeners', { value: listeners, enumerable: false });
  const prototype = EventTarget.prototype;
  const nativeAdd = prototype.addEventListener;
  const nativeRemove = prototype.removeEventListener;
  prototype.addEventListener = function (
    this: EventTarget,
    type: string,
    listener: EventListenerOrEventListenerObject | null,
    options?: boolean | AddEventListenerOptions,
  ) {
    if (listener) {
      const types = listeners.get(this) ?? new Map<string, Set<unknown>>();
      listeners.set(this, types);
      if (!types.has(type)) types.set(type, new Set());
      types.get(type)!.add(listener);
    }
    return nativeAdd.call(this, type, listener, options);
  };
  prototype.removeEventListener = function (
    this: EventTarget,
    type: string,
    listener: EventListenerOrEventListenerObject | null,
    options?: boolean | EventListenerOptions,
  ) {
    if (listener) listeners.get(this)?.get(type)?.delete(listener);
    return nativeRemove.call(this, type, listener, options);
  };
}

/**
 * Runs in every document of an episode's browser context before the page's own scripts (pageCall.ts
 * serialises it like the runtime, so it too references nothing outside itself): records the timeouts and
 * animation frames the page schedules, so settling can wait for what the page is about to show (an
 * autocomplete's suggestions 300 ms after typing). Intervals are not recorded: they never end.
 */
export function installTimerProbe(): void {
  if ('__webrlTimers' in window) return;
  const nativeSetTimeout = window.setTimeout.bind(window);
  const nativeClearTimeout = window.clearTimeout.bind(window);
  const nativeClearInterval = window.clearInterval.bind(window);
  const nativeRequestFrame = window.requestAnimationFrame.bind(window);
  const nativeCancelFrame = window.cancelAnimationFrame.bind(window);
  const timeouts = new Map<number, number>();
  const frames = new Set<number>();
  Object.defineProperty(window, '__webrlTimers', { value: { timeouts, frames, setTimeout: nativeSetTimeout }, enumerable: false });
  window.setTimeout = ((handler: TimerHandler, ms?: number, ...args: unknown[]): number => {
    if (typeof handler !== 'function') return nativeSetTimeout(handler, ms, ...args);
    const id = nativeSetTimeout(() => {
      timeouts.delete(id);
      (handler as (...values: unknown[]) => unknown).apply(window, args);
    }, ms);
    timeouts.set(id, performance.now() + Math.max(0, Number(ms) || 0));
    return id;
  }) as typeof window.setTimeout;
  // Timeout and interval ids share one pool; either clear function clears either.
  window.clearTimeout = ((id?: number) => {
    if (id !== undefined) timeouts.delete(id);
    nativeClearTimeout(id);
  }) as typeof window.clearTimeout;
  window.clearInterval = ((id?: number) => {
    if (id !== undefined) timeouts.delete(id);
    nativeClearInterval(id);
  }) as typeof window.clearInterval;
  window.requestAnimationFrame = (callback: FrameRequestCallback): number => {
    const id = nativeRequestFrame((time) => {
      frames.delete(id);
      callback(time);
    });
    frames.add(id);
    return id;
  };
  window.cancelAnimationFrame = (id: number) => {
    frames.delete(id);
    nativeCancelFrame(id);
  };
}
