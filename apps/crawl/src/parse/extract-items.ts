import type { Document } from 'domhandler';
import type { CrawlSpec } from '@trawl/schemas';
import { itemKey } from './item-key.ts';
import { attributeOf, selectAllIn, selectFirstIn, textOf } from './select.ts';

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
export function extractItems(doc: Document, spec: CrawlSpec, base: URL, pageUrl: string, maxItems: number): { items: ExtractedItem[]; capped: boolean } {
  if (!spec.item_root || spec.item_fields.length === 0) return { items: [], capped: false };
  const roots = selectAllIn(doc, spec.item_root);
  const n = Math.min(roots.length, maxItems);
  const items: ExtractedItem[] = [];
  for (let i = 0; i < n; i++) {
    const root = roots[i]!;
    const fields: Record<string, string> = {};
    for (const f of spec.item_fields) {
      const el = f.selector.trim() === '' ? root : selectFirstIn(root, f.selector);
      if (el === null) continue;
      if (f.attribute === null) {
        fields[f.name] = capped(textOf(el).replace(WHITESPACE, ' ').trim());
        continue;
      }
      const value = attributeOf(el, f.attribute);
      if (value === undefined) continue;
      fields[f.name] = capped(URL_ATTRIBUTES.has(f.attribute.toLowerCase()) ? absolute(value, base) : value.trim());
    }
    if (Object.keys(fields).length === 0) continue;
    items.push({ key: itemKey(pageUrl, i, fields), index: i, fields });
  }
  return { items, capped: roots.length > n };
}

function absolute(value: string, base: URL): string {
  const v = value.trim();
  try {
    return new URL(v, base).href;
  } catch {
    return v;
  }
}
