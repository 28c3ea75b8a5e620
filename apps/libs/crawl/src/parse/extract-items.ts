import type { Document, Element } from 'domhandler';
import type { CrawlSpec, ItemField } from '@trawl/schemas';
import { collapsedText, cutAt } from './bounded-text.ts';
import { itemKey } from './item-key.ts';
import { applyTransforms, type FieldValue } from './item-transforms.ts';
import { itemValidator, MAX_ERROR_CHARS, MAX_ITEM_ERRORS } from './item-schema.ts';
import { attributeOf, selectAllIn, selectFirstIn } from './select.ts';
import { DocumentView } from './xpath-dom.ts';
import { xpathElements, xpathField } from './xpath-select.ts';

export interface ExtractedItem {
  readonly key: string;
  readonly index: number;
  readonly fields: Readonly<Record<string, string>>;
  /** Why the item fails a field's transform or the website's item schema; empty when it is valid. */
  readonly errors: readonly string[];
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

/** Whether the spec extracts items: an item root (CSS or XPath) and at least one field. */
export function extractsItems(spec: CrawlSpec): boolean {
  return (!!spec.item_root || !!spec.item_root_xpath) && spec.item_fields.length > 0;
}

/** Whether any of the spec's item selectors is XPath (the document then needs its XPath view). */
function usesXPath(spec: CrawlSpec): boolean {
  // A spec from a job's stored JSON (not through Avro, which fills defaults) may lack the XPath fields.
  return (!spec.item_root && !!spec.item_root_xpath) || spec.item_fields.some((f) => !!f.xpath);
}

/** The item roots of a page: `item_root` (CSS) when set, else `item_root_xpath`. */
export function itemRootsOf(doc: Document, spec: CrawlSpec, view: DocumentView | null = null): Element[] {
  if (spec.item_root) return selectAllIn(doc, spec.item_root);
  if (!spec.item_root_xpath) return [];
  return xpathElements(view ?? new DocumentView(doc), doc, spec.item_root_xpath);
}

/**
 * Items by the website's selectors: each item root (`item_root`, CSS, or `item_root_xpath`) is one
 * item; each field is the first match of its selector inside the root (empty selector: the root
 * itself), or what its `xpath` reads from the root (xpath-select.ts), as whitespace-collapsed text
 * or as an attribute. A field whose element or attribute is missing is left out of the item (absent
 * is not the same as empty); an item with no field at all is skipped.
 *
 * Each value then goes through its field's transforms, and the item through the website's item
 * schema (item-transforms.ts, item-schema.ts): an item a transform or the schema refuses is kept,
 * with its `errors`. Its fields stay text (a `number` transform's 1299 reads "1299").
 *
 * A root nested in another root is its own item, and its content is its own: while the outer item
 * is read, the nested root is an empty element. So every node of the page is read for one item at
 * most, and 500 roots nested in each other cost one reading of the page, not 500.
 *
 * The page's items are kept in document order while their bytes fit `maxItemBytes`; from the first
 * that does not, the rest are counted, not extracted (a page's items stay a prefix of the page).
 */
export function extractItems(doc: Document, spec: CrawlSpec, base: URL, pageUrl: string, limits: ItemLimits): ExtractedItems {
  if (!extractsItems(spec)) return { items: [], bytes: 0, cut: { overCount: 0, overBytes: 0 } };
  // Made before any nested root is hidden: the view's document order covers every node.
  const view = usesXPath(spec) ? new DocumentView(doc) : null;
  const validate = spec.item_schema ? itemValidator(spec.item_schema) : null;
  const roots = itemRootsOf(doc, spec, view);
  const n = Math.min(roots.length, limits.maxItems);
  const nested = nestedRootsOf(roots, n);
  const items: ExtractedItem[] = [];
  let bytes = 0;
  for (let i = 0; i < n; i++) {
    const root = roots[i]!;
    const read = withNestedHidden(nested.get(root), () => readFields(root, spec, base, view));
    if (read === null) continue;
    const { fields, errors } = checked(read, validate);
    const size = bytesOf(fields) + errors.reduce((sum, e) => sum + Buffer.byteLength(e), 0);
    if (bytes + size > limits.maxItemBytes) return { items, bytes, cut: { overCount: roots.length - n, overBytes: n - i } };
    bytes += size;
    items.push({ key: itemKey(pageUrl, i, fields), index: i, fields, errors });
  }
  return { items, bytes, cut: { overCount: roots.length - n, overBytes: 0 } };
}

/** An item's values after their transforms, and what the transforms refused. */
interface ReadItem {
  readonly values: Record<string, FieldValue>;
  readonly errors: string[];
}

function readFields(root: Element, spec: CrawlSpec, base: URL, view: DocumentView | null): ReadItem | null {
  const values: Record<string, FieldValue> = {};
  const errors: string[] = [];
  let any = false;
  for (const f of spec.item_fields) {
    const value = readField(root, f, base, view);
    if (value === undefined) continue;
    any = true;
    if (!f.transforms || f.transforms.length === 0) {
      values[f.name] = value;
      continue;
    }
    const out = applyTransforms(value, f.transforms, base);
    values[f.name] = typeof out.value === 'string' ? cutAt(out.value, MAX_FIELD_CHARS) : out.value;
    if (out.error !== null) errors.push(`${f.name}: ${out.error}`);
  }
  return any ? { values, errors } : null;
}

/** One field's value from its root, before transforms; undefined when absent. */
function readField(root: Element, f: ItemField, base: URL, view: DocumentView | null): string | undefined {
  if (f.xpath && view !== null) {
    const read = xpathField(view, root, f.xpath, f.attribute, MAX_FIELD_CHARS);
    if (read === undefined) return undefined;
    return read.attribute !== null && URL_ATTRIBUTES.has(read.attribute.toLowerCase()) ? cutAt(absolute(read.value, base), MAX_FIELD_CHARS) : read.value;
  }
  const el = f.selector.trim() === '' ? root : selectFirstIn(root, f.selector);
  if (el === null) return undefined;
  if (f.attribute === null) return collapsedText(el, MAX_FIELD_CHARS);
  const value = attributeOf(el, f.attribute, MAX_FIELD_CHARS);
  if (value === undefined) return undefined;
  return cutAt(URL_ATTRIBUTES.has(f.attribute.toLowerCase()) ? absolute(value, base) : value.trim(), MAX_FIELD_CHARS);
}

/** The item as events carry it (text fields) with its transform and schema errors, capped. */
function checked(read: ReadItem, validate: ((item: Readonly<Record<string, unknown>>) => string[]) | null): { fields: Record<string, string>; errors: string[] } {
  const fields: Record<string, string> = {};
  for (const name in read.values) fields[name] = String(read.values[name]);
  const errors = validate ? [...read.errors, ...validate(read.values)] : read.errors;
  return { fields, errors: errors.slice(0, MAX_ITEM_ERRORS).map((e) => (e.length > MAX_ERROR_CHARS ? e.slice(0, MAX_ERROR_CHARS) : e)) };
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
