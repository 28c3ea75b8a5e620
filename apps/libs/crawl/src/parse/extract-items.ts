import type { Document, Element } from 'domhandler';
import type { CrawlSpec } from '@trawl/schemas';
import { collapsedText, cutAt } from './bounded-text.ts';
import { itemKey } from './item-key.ts';
import { attributeOf, selectAllIn, selectFirstIn } from './select.ts';

export interface ExtractedItem {
  readonly key: string;
  readonly index: number;
  readonly fields: Readonly<Record<string, string>>;
}

export interface ItemLimits {
  /** Item roots read per page; the rest are counted in `cut.overCount`. */
  readonly maxItems: number;
  /** Bytes (UTF-8, field names and values) of a page's items together; items past it are counted in `cut.overBytes`. */
  readonly maxItemBytes: number;
}

export interface ExtractedItems {
  readonly items: ExtractedItem[];
  /** UTF-8 bytes of the items kept (field names and values). */
  readonly bytes: number;
  /** Items not extracted: roots past `maxItems`, and items past `maxItemBytes` (the first item over it and every one after). */
  readonly cut: { readonly overCount: number; readonly overBytes: number };
}

/** Attributes whose values are URLs: made absolute so an item is usable without its page. */
const URL_ATTRIBUTES = new Set(['href', 'src', 'action', 'data-src', 'data-href', 'poster', 'cite']);

/**
 * A field value longer than this is cut: an ItemExtracted event must stay under Kafka's 1 MiB message
 * limit, and a 10 MB attribute (an HTML bomb) would otherwise make one that can never be produced.
 * Text is read no further than this (bounded-text.ts).
 */
export const MAX_FIELD_CHARS = 16 * 1024;

/**
 * Items by the website's selectors: each `item_root` match is one item; each field is the first match
 * of its selector inside the root (empty selector: the root itself), read as whitespace-collapsed text
 * or as an attribute. A field whose element or attribute is missing is left out of the item (absent
 * is not the same as empty); an item with no field at all is skipped.
 *
 * A root nested in another root is its own item, and its content is its own: while the outer item
 * is read, the nested root is an empty element. So every node of the page is read for one item at
 * most, and 500 roots nested in each other cost one reading of the page, not 500.
 *
 * The page's items are kept in document order while their bytes fit `maxItemBytes`; from the first
 * that does not, the rest are counted, not extracted (a page's items stay a prefix of the page).
 */
export function extractItems(doc: Document, spec: CrawlSpec, base: URL, pageUrl: string, limits: ItemLimits): ExtractedItems {
  if (!spec.item_root || spec.item_fields.length === 0) return { items: [], bytes: 0, cut: { overCount: 0, overBytes: 0 } };
  const roots = selectAllIn(doc, spec.item_root);
  const n = Math.min(roots.length, limits.maxItems);
  const nested = nestedRootsOf(roots, n);
  const items: ExtractedItem[] = [];
  let bytes = 0;
  for (let i = 0; i < n; i++) {
    const root = roots[i]!;
    const fields = withNestedHidden(nested.get(root), () => readFields(root, spec, base));
    if (fields === null) continue;
    const size = bytesOf(fields);
    if (bytes + size > limits.maxItemBytes) return { items, bytes, cut: { overCount: roots.length - n, overBytes: n - i } };
    bytes += size;
    items.push({ key: itemKey(pageUrl, i, fields), index: i, fields });
  }
  return { items, bytes, cut: { overCount: roots.length - n, overBytes: 0 } };
}

function readFields(root: Element, spec: CrawlSpec, base: URL): Record<string, string> | null {
  const fields: Record<string, string> = {};
  let any = false;
  for (const f of spec.item_fields) {
    const el = f.selector.trim() === '' ? root : selectFirstIn(root, f.selector);
    if (el === null) continue;
    if (f.attribute === null) {
      fields[f.name] = collapsedText(el, MAX_FIELD_CHARS);
      any = true;
      continue;
    }
    const value = attributeOf(el, f.attribute, MAX_FIELD_CHARS);
    if (value === undefined) continue;
    fields[f.name] = cutAt(URL_ATTRIBUTES.has(f.attribute.toLowerCase()) ? absolute(value, base) : value.trim(), MAX_FIELD_CHARS);
    any = true;
  }
  return any ? fields : null;
}

/**
 * For each of the first `n` roots, the roots nested directly in it (whose nearest enclosing root it
 * is). Each root walks up to its nearest enclosing root: at most the nesting depth the parser
 * allows (load-html.ts) per root.
 */
function nestedRootsOf(roots: readonly Element[], n: number): Map<Element, Element[]> {
  const nested = new Map<Element, Element[]>();
  if (roots.length < 2) return nested;
  const isRoot = new Set<unknown>(roots);
  const extracted = new Set<unknown>(roots.slice(0, n));
  for (const root of roots) {
    let up = root.parent;
    while (up !== null && !isRoot.has(up)) up = up.parent;
    if (up === null || !extracted.has(up)) continue;
    const outer = up as Element;
    const list = nested.get(outer);
    if (list) list.push(root);
    else nested.set(outer, [root]);
  }
  return nested;
}

/** Runs `read` with the given elements' children taken away, and puts them back. */
function withNestedHidden<T>(hidden: readonly Element[] | undefined, read: () => T): T {
  if (!hidden) return read();
  const saved = hidden.map((el) => el.children);
  for (const el of hidden) el.children = [];
  try {
    return read();
  } finally {
    hidden.forEach((el, i) => (el.children = saved[i]!));
  }
}

function bytesOf(fields: Readonly<Record<string, string>>): number {
  let n = 0;
  for (const name in fields) n += Buffer.byteLength(name) + Buffer.byteLength(fields[name]!);
  return n;
}

function absolute(value: string, base: URL): string {
  const v = value.trim();
  try {
    return new URL(v, base).href;
  } catch {
    return v;
  }
}
