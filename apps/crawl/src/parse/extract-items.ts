import type { Cheerio, CheerioAPI } from 'cheerio/slim';
import { compile, selectOne } from 'css-select';
import { hasChildren, type AnyNode, type Element } from 'domhandler';
import type { CrawlSpec } from '@trawl/schemas';
import { itemKey } from './item-key.ts';

export interface ExtractedItem {
  readonly key: string;
  readonly index: number;
  readonly fields: Readonly<Record<string, string>>;
}

/** Attributes whose values are URLs: made absolute so an item is usable without its page. */
const URL_ATTRIBUTES = new Set(['href', 'src', 'action', 'data-src', 'data-href', 'poster', 'cite']);
const WHITESPACE = /\s+/g;

/**
 * A field value longer than this is cut: an ItemExtracted event must stay under Kafka's 1 MiB message
 * limit, and a 10 MB attribute (an HTML bomb) would otherwise make one that can never be produced.
 */
export const MAX_FIELD_CHARS = 16 * 1024;

/** `value` cut to MAX_FIELD_CHARS, never between the two halves of a surrogate pair. */
function capped(value: string): string {
  if (value.length <= MAX_FIELD_CHARS) return value;
  const cut = value.slice(0, MAX_FIELD_CHARS);
  return /[\uD800-\uDBFF]$/.test(cut) ? cut.slice(0, -1) : cut;
}

/**
 * Items by the website's selectors: each `item_root` match is one item; each field is the first match
 * of its selector inside the root (empty selector: the root itself), read as whitespace-collapsed text
 * or as an attribute. A field whose element or attribute is missing is left out of the item (absent
 * is not the same as empty); an item with no field at all is skipped.
 */
export function extractItems($: CheerioAPI, spec: CrawlSpec, base: URL, pageUrl: string, maxItems: number): { items: ExtractedItem[]; capped: boolean } {
  if (!spec.item_root || spec.item_fields.length === 0) return { items: [], capped: false };
  const roots = $(spec.item_root);
  const n = Math.min(roots.length, maxItems);
  const items: ExtractedItem[] = [];
  for (let i = 0; i < n; i++) {
    const root = roots.eq(i);
    const fields: Record<string, string> = {};
    for (const f of spec.item_fields) {
      const el = f.selector.trim() === '' ? root : firstMatch($, root, f.selector);
      if (el.length === 0) continue;
      if (f.attribute === null) {
        fields[f.name] = capped(el.text().replace(WHITESPACE, ' ').trim());
        continue;
      }
      const value = el.attr(f.attribute);
      if (value === undefined) continue;
      fields[f.name] = capped(URL_ATTRIBUTES.has(f.attribute.toLowerCase()) ? absolute(value, base) : value.trim());
    }
    if (Object.keys(fields).length === 0) continue;
    items.push({ key: itemKey(pageUrl, i, fields), index: i, fields });
  }
  return { items, capped: roots.length > n };
}

/**
 * Field selectors compiled once and kept (a website has a handful; items × fields compiles per page
 * were 90% of extraction time). A selector css-select cannot compile (cheerio's jQuery extensions
 * such as `:first` or `:eq(1)`) is remembered as such and read through cheerio instead.
 */
type FieldQuery = ReturnType<typeof compile<AnyNode, Element>>;
const compiledSelectors = new Map<string, FieldQuery | null>();
const MAX_COMPILED_SELECTORS = 10_000;

function compiled(selector: string): FieldQuery | null {
  let query = compiledSelectors.get(selector);
  if (query !== undefined) return query;
  try {
    query = compile<AnyNode, Element>(selector, { xmlMode: false });
  } catch {
    query = null;
  }
  if (compiledSelectors.size >= MAX_COMPILED_SELECTORS) compiledSelectors.clear();
  compiledSelectors.set(selector, query);
  return query;
}

/** The first descendant of `root` matching `selector`, as cheerio's `root.find(selector).first()`. */
function firstMatch($: CheerioAPI, root: Cheerio<AnyNode>, selector: string): Cheerio<AnyNode> {
  const query = compiled(selector);
  if (query === null) return root.find(selector).first();
  const node = root.get(0);
  const el = node && hasChildren(node) ? selectOne<AnyNode, Element>(query, node.children) : null;
  return el ? $(el) : root.slice(0, 0);
}

function absolute(value: string, base: URL): string {
  const v = value.trim();
  try {
    return new URL(v, base).href;
  } catch {
    return v;
  }
}
