/**
 * A page's events bounded in bytes before they are produced: the broker refuses a record over its
 * `message.max.bytes`, and the producer (TRAWL_MAX_EVENT_BYTES) refuses one over its limit before
 * the broker can. What a page can make too big is bounded here, so that a page's events fit:
 *
 * - an item's field values are cut by bytes, at a UTF-8 character boundary, the longest first (the
 *   short ones stay whole: a title survives a huge description), and the cut fields are named in
 *   `truncated_fields`;
 * - a page's links are kept in order while they fit, and the rest counted in `links_dropped`
 *   (the frontier never sees them: a page with more link bytes than an event holds is a trap or a
 *   sitemap, not a page whose every link matters); the URLs of a site's sitemaps then take what room
 *   is left, the rest counted in `sitemap_urls_dropped`;
 *
 * This is the event's bound, not the extraction's: parsing bounds each field in characters and a
 * page's items in total (parse/), so items are small long before they come near an event's size;
 * this bound is the last one, in the unit the broker counts.
 *
 * Sizes are Avro's binary encoding, over-estimated a little (every length prefix and number counted
 * at its widest), plus a reserve for what the record adds around the value. An estimate that is
 * short anyway is caught by the producer's exact check, which fails the whole page.
 */
import type { ItemExtracted, PageFetched } from '@trawl/schemas';

/** The record around the value: schema id prefix, key, headers (the event's name, a trace context), record overhead. */
export const RECORD_RESERVE_BYTES = 1_024;

const LONG = 10; // a zig-zag varint of a 64-bit number, at its widest
const UNION = 1;
const BLOCKS = 2 * 5; // an array's or map's block count, and its terminating 0

function utf8Bytes(s: string): number {
  return Buffer.byteLength(s, 'utf8');
}

/** An Avro string: its bytes behind a varint length (zig-zag: 2n, 7 bits a byte). */
function stringCost(s: string): number {
  const n = utf8Bytes(s);
  return n + varintBytes(n);
}

function varintBytes(n: number): number {
  let zigzag = 2 * n;
  let bytes = 1;
  while (zigzag >= 128) {
    zigzag = Math.floor(zigzag / 128);
    bytes++;
  }
  return bytes;
}

const optionalString = (s: string | null): number => UNION + (s === null ? 0 : stringCost(s));

/** The encoded size of a PageFetched (without its record's reserve), an upper bound. */
export function pageFetchedBytes(e: PageFetched): number {
  return linksBytes(e.links) + linksBytes(e.sitemap_urls) + pageWithoutLinks(e);
}

function pageWithoutLinks(e: PageFetched): number {
  return (
    stringCost(e.event_id) + LONG + optionalString(e.causation_id) + stringCost(e.job_id) + stringCost(e.fetch_id) +
    stringCost(e.url) + stringCost(e.final_url) + LONG + optionalString(e.content_type) + LONG + LONG + LONG + LONG +
    BLOCKS + optionalString(e.next_page) + LONG + LONG + 1 + 1 + LONG +
    // What is stored of the page (content hash, formats) and what the HTTP cache needs (validators, reuse mark).
    optionalString(e.content_hash) + formatsBytes(e.formats) + optionalString(e.etag) + optionalString(e.last_modified) + UNION + LONG +
    // The sitemap URLs' array framing and their dropped count.
    BLOCKS + LONG
  );
}

function formatsBytes(formats: PageFetched['formats']): number {
  let n = BLOCKS;
  for (const f of formats) n += stringCost(f.format) + stringCost(f.hash) + LONG;
  return n;
}

function linksBytes(links: readonly string[]): number {
  let n = 0;
  for (const l of links) n += stringCost(l);
  return n;
}

/** The encoded size of an ItemExtracted (without its record's reserve), an upper bound. */
export function itemExtractedBytes(e: ItemExtracted): number {
  let fields = BLOCKS;
  for (const [k, v] of Object.entries(e.fields)) fields += stringCost(k) + stringCost(v);
  let cut = BLOCKS;
  for (const name of e.truncated_fields) cut += stringCost(name);
  return itemWithoutFields(e) + fields + cut;
}

function itemWithoutFields(e: ItemExtracted): number {
  // An item's errors are few and short (parse/item-schema.ts caps them), counted whole, never cut.
  let errors = BLOCKS;
  for (const err of e.errors) errors += stringCost(err);
  return stringCost(e.event_id) + LONG + optionalString(e.causation_id) + stringCost(e.job_id) + stringCost(e.fetch_id) + stringCost(e.item_key) + stringCost(e.url) + errors;
}

/** `s` cut to at most `maxBytes` of UTF-8, never inside a character. */
export function truncateUtf8(s: string, maxBytes: number): string {
  if (maxBytes <= 0) return '';
  if (s.length * 3 <= maxBytes) return s; // a UTF-16 unit is at most 3 UTF-8 bytes (a pair: 4 for 2)
  const buf = new Uint8Array(maxBytes);
  // encodeInto writes whole characters only: `read` is where the last one that fitted ends.
  const { read } = new TextEncoder().encodeInto(s, buf);
  return s.slice(0, read);
}

/**
 * The PageFetched with only the links that fit `maxEventBytes`, the rest counted in `links_dropped`;
 * then the sitemap URLs that fit in what is left, the rest counted in `sitemap_urls_dropped`.
 */
export function boundLinks(e: PageFetched, maxEventBytes: number): PageFetched {
  const budget = maxEventBytes - RECORD_RESERVE_BYTES - pageWithoutLinks(e);
  const linkBytes = linksBytes(e.links);
  if (linkBytes + linksBytes(e.sitemap_urls) <= budget) return e;
  const links = fitting(e.links, budget);
  const sitemap = fitting(e.sitemap_urls, budget - links.used);
  return {
    ...e,
    links: e.links.slice(0, links.kept),
    links_dropped: e.links_dropped + e.links.length - links.kept,
    sitemap_urls: e.sitemap_urls.slice(0, sitemap.kept),
    sitemap_urls_dropped: e.sitemap_urls_dropped + e.sitemap_urls.length - sitemap.kept,
  };
}

/** How many of `urls`, from the first, fit in `budget` bytes, and the bytes they use. */
function fitting(urls: readonly string[], budget: number): { kept: number; used: number } {
  let used = 0;
  let kept = 0;
  for (; kept < urls.length; kept++) {
    const cost = stringCost(urls[kept]!);
    if (used + cost > budget) break;
    used += cost;
  }
  return { kept, used };
}

/**
 * The item with its field values cut so that it fits `maxEventBytes`: every value longer than a cap
 * is cut to it, the cap as high as the budget allows (so values under it stay whole).
 */
export function boundItem(e: ItemExtracted, maxEventBytes: number): ItemExtracted {
  if (itemExtractedBytes(e) + RECORD_RESERVE_BYTES <= maxEventBytes) return e;
  const entries = Object.entries(e.fields);
  // What does not shrink: the envelope, every field's name and widest length prefix, and the list
  // of cut fields should every name end up in it.
  let fixed = itemWithoutFields(e) + BLOCKS + BLOCKS;
  for (const [k] of entries) fixed += 2 * stringCost(k) + 5;
  const room = maxEventBytes - RECORD_RESERVE_BYTES - fixed;
  const cap = waterLevel(entries.map(([, v]) => utf8Bytes(v)), room);
  const fields: Record<string, string> = {};
  const cut = new Set(e.truncated_fields);
  for (const [k, v] of entries) {
    const kept = truncateUtf8(v, cap);
    if (kept.length < v.length) cut.add(k);
    fields[k] = kept;
  }
  return { ...e, fields, truncated_fields: [...cut] };
}

/** The largest cap c with Σ min(len, c) ≤ room (0 when even empty values do not fit). */
function waterLevel(lengths: readonly number[], room: number): number {
  if (room <= 0) return 0;
  const sorted = [...lengths].sort((a, b) => a - b);
  let below = 0;
  for (let i = 0; i < sorted.length; i++) {
    const rest = sorted.length - i;
    if (below + rest * sorted[i]! > room) return Math.floor((room - below) / rest);
    below += sorted[i]!;
  }
  return Number.MAX_SAFE_INTEGER;
}
