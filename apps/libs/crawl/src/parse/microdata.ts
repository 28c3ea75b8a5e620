/**
 * WHATWG microdata (`itemscope` / `itemtype` / `itemprop` / `itemid`) as JSON: each top-level item
 * (an `itemscope` that is no one's `itemprop`) with `type` (its itemtype URLs), `id` and
 * `properties` (name → values, in document order); a value is a nested item or a string read as
 * the HTML standard says (`content` of a meta, `href` of a link, `src` of media, `datetime` of a
 * time, `value` of data/meter, the element's text otherwise).
 *
 * Why not a library: the kept ones either parse the page again with their own parser
 * (microdata-node: htmlparser2 4 and an RDF round trip; htmlmetaparser: a handler whose text
 * accumulates up the whole tree at every closing tag, quadratic in the nesting), or need a browser
 * DOM and throw on any itemtype that is not a schema.org primitive (@cucumber/microdata). This walks
 * the tree the parse step already has, once, within bounds: `itemref` is not followed (it can point
 * anywhere, cycles included), nesting stops at MAX_DEPTH, and items, properties and text are capped.
 */
import { isTag, type AnyNode, type Document, type Element } from 'domhandler';
import { cutAt, rawText } from './bounded-text.ts';

export interface MicrodataItem {
  type?: string[];
  id?: string;
  properties: Record<string, (string | MicrodataItem)[]>;
}

export interface MicrodataLimits {
  /** Items kept, nested ones included. */
  readonly maxItems: number;
  /** Values kept per item. */
  readonly maxValues: number;
  /** Characters of one value. */
  readonly maxValueChars: number;
}

/** Items nested deeper than this are read as their text. */
const MAX_DEPTH = 8;

const URL_ATTRIBUTE: Readonly<Record<string, string>> = {
  a: 'href', area: 'href', link: 'href', audio: 'src', embed: 'src', iframe: 'src', img: 'src', source: 'src', track: 'src', video: 'src', object: 'data',
};
const PLAIN_ATTRIBUTE: Readonly<Record<string, string>> = { meta: 'content', data: 'value', meter: 'value', time: 'datetime' };

/** The document's microdata, and how many items the limits left out. */
export function extractMicrodata(doc: Document, base: URL, limits: MicrodataLimits): { items: MicrodataItem[]; cut: number } {
  const state = { items: 0, cut: 0 };
  const top: MicrodataItem[] = [];
  // Iterative walk for the top-level items; their own trees are bounded by MAX_DEPTH.
  const stack: AnyNode[] = [...doc.children].reverse();
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (!isTag(node)) continue;
    if (hasAttr(node, 'itemscope') && !hasAttr(node, 'itemprop')) {
      const item = readItem(node, base, limits, state, 0);
      if (item) top.push(item);
      continue;
    }
    for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i]!);
  }
  return { items: top, cut: state.cut };
}

function hasAttr(el: Element, name: string): boolean {
  return Object.hasOwn(el.attribs, name);
}

function readItem(el: Element, base: URL, limits: MicrodataLimits, state: { items: number; cut: number }, depth: number): MicrodataItem | null {
  if (state.items >= limits.maxItems) {
    state.cut++;
    return null;
  }
  state.items++;
  const item: MicrodataItem = { properties: {} };
  const types = (el.attribs.itemtype ?? '').trim().split(/\s+/).filter(Boolean).slice(0, 10).map((t) => cutAt(t, limits.maxValueChars));
  if (types.length > 0) item.type = types;
  const id = el.attribs.itemid?.trim();
  if (id) item.id = cutAt(id, limits.maxValueChars);
  let values = 0;
  // The properties are the itemprops below this item, not below a nested item (that one owns them).
  const stack: AnyNode[] = [...el.children].reverse();
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (!isTag(node)) continue;
    const names = hasAttr(node, 'itemprop') ? node.attribs.itemprop!.trim().split(/\s+/).filter(Boolean) : [];
    const scoped = hasAttr(node, 'itemscope');
    if (names.length > 0) {
      const value = scoped && depth + 1 < MAX_DEPTH ? readItem(node, base, limits, state, depth + 1) : valueOf(node, base, limits.maxValueChars);
      if (value !== null) {
        for (const name of names.slice(0, 10)) {
          if (values >= limits.maxValues) break;
          values++;
          (item.properties[cutAt(name, 200)] ??= []).push(value);
        }
      }
    }
    if (scoped) continue;
    for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i]!);
  }
  return item;
}

function valueOf(el: Element, base: URL, maxChars: number): string {
  const urlAttr = URL_ATTRIBUTE[el.name];
  if (urlAttr) {
    const raw = el.attribs[urlAttr] ?? '';
    return cutAt(resolved(raw.trim(), base), maxChars);
  }
  const plain = PLAIN_ATTRIBUTE[el.name];
  if (plain && hasAttr(el, plain)) return cutAt(el.attribs[plain]!.trim(), maxChars);
  return rawText(el, maxChars * 4).replace(/\s+/g, ' ').trim().slice(0, maxChars);
}

/** A URL value resolved against the page, as written when it is no URL. */
export function resolved(raw: string, base: URL): string {
  try {
    return new URL(raw, base).href;
  } catch {
    return raw;
  }
}
