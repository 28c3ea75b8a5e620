/**
 * A page's structured data, read from the tree the parse step already has: title, description,
 * language, canonical URL, OpenGraph (`og:*`, and the `article:`/`product:`/… properties OpenGraph
 * types add) and Twitter card (`twitter:*`) properties, JSON-LD objects and microdata items.
 *
 * Bounded like every parse output (invariant 9: a page is anyone's): properties, values, JSON-LD
 * blocks and their bytes, microdata items are capped, and the whole object is kept under
 * `maxBytes` of JSON — what is left out is counted in `cut`, never silently. A JSON-LD block that
 * does not parse is skipped and counted (`json_ld_invalid`); one past the byte caps is not parsed
 * at all. The object is stored in the content store as the `metadata` format (JSON), never put in
 * an event: PageFetched stays small.
 */
import type { Document, Element } from 'domhandler';
import { cutAt, rawText } from './bounded-text.ts';
import { extractMicrodata, type MicrodataItem } from './microdata.ts';
import { canonicalOf } from './page-hints.ts';
import { selectAllIn, selectFirstIn } from './select.ts';

export interface MetadataLimits {
  /** OpenGraph and Twitter properties together (values of a repeated property count one each). */
  readonly maxProperties: number;
  /** Characters of one value (title, description, property). */
  readonly maxValueChars: number;
  readonly maxJsonLdBlocks: number;
  /** Characters of one JSON-LD block: a longer one is not parsed (counted in `cut.json_ld`). */
  readonly maxJsonLdChars: number;
  readonly maxMicrodataItems: number;
  /** The whole object as JSON: past it, microdata items, then JSON-LD objects, are left out from the end. */
  readonly maxBytes: number;
}

export const DEFAULT_METADATA_LIMITS: MetadataLimits = {
  maxProperties: 100,
  maxValueChars: 2_000,
  maxJsonLdBlocks: 20,
  maxJsonLdChars: 128 * 1024,
  maxMicrodataItems: 200,
  maxBytes: 256 * 1024,
};

export interface PageMetadata {
  title: string | null;
  description: string | null;
  /** `<html lang>`, else `<meta http-equiv="content-language">`. */
  language: string | null;
  canonical: string | null;
  /** `og:*` (and OpenGraph type namespaces: `article:*`, `book:*`, `profile:*`, `product:*`, `music:*`, `video:*`) by property; a repeated one (`og:image`) is a list. */
  open_graph: Record<string, string | string[]>;
  /** `twitter:*` by name. */
  twitter: Record<string, string | string[]>;
  /** Each JSON-LD block's value (an object, or an array of them), in page order. */
  json_ld: unknown[];
  /** JSON-LD blocks that did not parse as JSON: skipped. */
  json_ld_invalid: number;
  microdata: MicrodataItem[];
  /** What the limits left out: properties, JSON-LD blocks, microdata items. */
  cut: { properties: number; json_ld: number; microdata: number };
}

const OPEN_GRAPH = /^(og|article|book|profile|product|music|video|fb):/;

export function extractMetadata(doc: Document, base: URL, limits: MetadataLimits = DEFAULT_METADATA_LIMITS): PageMetadata {
  const clip = (text: string | undefined | null): string | null => {
    const value = text ? cutAt(text.replace(/\s+/g, ' ').trim(), limits.maxValueChars) : '';
    return value === '' ? null : value;
  };
  const meta: PageMetadata = {
    title: clip(titleOf(doc, limits.maxValueChars)),
    description: null,
    language: clip(selectFirstIn(doc, 'html[lang]')?.attribs.lang)?.slice(0, 35) ?? null,
    canonical: canonicalOf(doc, base),
    open_graph: {},
    twitter: {},
    json_ld: [],
    json_ld_invalid: 0,
    microdata: [],
    cut: { properties: 0, json_ld: 0, microdata: 0 },
  };
  let properties = 0;
  for (const el of selectAllIn(doc, 'meta[content]')) {
    const content = el.attribs.content;
    const name = (el.attribs.property ?? el.attribs.name ?? '').trim().toLowerCase();
    const equiv = (el.attribs['http-equiv'] ?? '').trim().toLowerCase();
    if (name === 'description') {
      meta.description ??= clip(content);
      continue;
    }
    if (equiv === 'content-language' && meta.language === null) {
      meta.language = clip(content)?.split(',')[0]?.trim().slice(0, 35) ?? null;
      continue;
    }
    const into = OPEN_GRAPH.test(name) ? meta.open_graph : name.startsWith('twitter:') ? meta.twitter : null;
    const value = clip(content);
    if (into === null || value === null) continue;
    if (properties >= limits.maxProperties) {
      meta.cut.properties++;
      continue;
    }
    properties++;
    const key = name.slice(0, 100);
    const had = into[key];
    into[key] = had === undefined ? value : Array.isArray(had) ? [...had, value] : [had, value];
  }
  readJsonLd(doc, meta, limits);
  const micro = extractMicrodata(doc, base, { maxItems: limits.maxMicrodataItems, maxValues: 100, maxValueChars: limits.maxValueChars });
  meta.microdata = micro.items;
  meta.cut.microdata = micro.cut;
  return fitBytes(meta, limits.maxBytes);
}

/** The first `<title>` not inside an `<svg>` (whose `<title>` names a drawing, not the page). */
function titleOf(doc: Document, maxChars: number): string | null {
  for (const el of selectAllIn(doc, 'title')) {
    if (inside(el, 'svg')) continue;
    return rawText(el, maxChars * 4);
  }
  return null;
}

function inside(el: Element, name: string): boolean {
  for (let p = el.parent; p; p = p.parent) if ((p as Element).name === name) return true;
  return false;
}

function readJsonLd(doc: Document, meta: PageMetadata, limits: MetadataLimits): void {
  for (const el of selectAllIn(doc, 'script[type]')) {
    if ((el.attribs.type ?? '').split(';')[0]!.trim().toLowerCase() !== 'application/ld+json') continue;
    if (meta.json_ld.length >= limits.maxJsonLdBlocks) {
      meta.cut.json_ld++;
      continue;
    }
    const text = rawText(el, limits.maxJsonLdChars + 1);
    if (text.length > limits.maxJsonLdChars) {
      meta.cut.json_ld++;
      continue;
    }
    try {
      // Sites wrap blocks in HTML comments or CDATA markers; JSON.parse takes neither.
      const value: unknown = JSON.parse(text.trim().replace(/^(?:<!--|\/\/\s*<!\[CDATA\[)|(?:-->|\/\/\s*\]\]>)$/g, ''));
      if (typeof value === 'object' && value !== null) meta.json_ld.push(value);
      else meta.json_ld_invalid++;
    } catch {
      meta.json_ld_invalid++;
    }
  }
}

/** The metadata within `maxBytes` of JSON: microdata items, then JSON-LD objects, dropped from the end (and counted) until it fits. */
function fitBytes(meta: PageMetadata, maxBytes: number): PageMetadata {
  let size = Buffer.byteLength(JSON.stringify(meta));
  while (size > maxBytes && (meta.microdata.length > 0 || meta.json_ld.length > 0)) {
    if (meta.microdata.length > 0) {
      size -= Buffer.byteLength(JSON.stringify(meta.microdata.pop())) + 1;
      meta.cut.microdata++;
    } else {
      size -= Buffer.byteLength(JSON.stringify(meta.json_ld.pop())) + 1;
      meta.cut.json_ld++;
    }
  }
  return meta;
}
