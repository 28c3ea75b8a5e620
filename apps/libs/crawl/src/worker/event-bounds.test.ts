import { describe, expect, it } from 'vitest';
import { avroType, eventSchema, samples, type ItemExtracted, type PageFetched } from '@trawl/schemas';
import { boundItem, boundLinks, itemExtractedBytes, pageFetchedBytes, RECORD_RESERVE_BYTES, truncateUtf8 } from './event-bounds.ts';

const itemType = avroType(eventSchema('ItemExtracted'));
const pageType = avroType(eventSchema('PageFetched'));
/** The value's real size on the wire: the Avro body behind the registry's 5-byte prefix. */
const itemWire = (e: ItemExtracted) => 5 + itemType.toBuffer(e).length;
const pageWire = (e: PageFetched) => 5 + pageType.toBuffer(e).length;

const item = (fields: Record<string, string>): ItemExtracted => ({ ...samples.ItemExtracted, fields, truncated_fields: [] });
const page = (links: string[]): PageFetched => ({ ...samples.PageFetched, links, links_dropped: 0 });
const cjk = (n: number) => '字'.repeat(n);

describe('event bounds: sizes', () => {
  it('never under-estimates the encoded size, and over-estimates by little', () => {
    const cases = [
      item({}),
      item({ title: 'x' }),
      item({ a: cjk(16 * 1024), b: 'ü'.repeat(70), c: '🎣'.repeat(3_000), ['ключ']: 'значение' }),
      item(Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`field_${i}`, cjk(i * 300)]))),
    ];
    for (const e of cases) {
      expect(itemExtractedBytes(e)).toBeGreaterThanOrEqual(itemWire(e));
      expect(itemExtractedBytes(e)).toBeLessThanOrEqual(itemWire(e) * 1.02 + 200);
    }
    const stored = { content_hash: 'f'.repeat(64), formats: [{ format: 'html', hash: 'f'.repeat(64), bytes: 123_456 }, { format: 'markdown', hash: 'e'.repeat(64), bytes: 7 }] };
    const bare = { content_hash: null, formats: [], etag: null, last_modified: null, from_cache: null };
    for (const links of [[], ['http://a.example/'], Array.from({ length: 5_000 }, (_, i) => `http://a.example/${'é'.repeat(i % 400)}/${i}`)]) {
      for (const e of [page(links), { ...page(links), ...stored }, { ...page(links), ...bare }]) {
        expect(pageFetchedBytes(e)).toBeGreaterThanOrEqual(pageWire(e));
        expect(pageFetchedBytes(e)).toBeLessThanOrEqual(pageWire(e) * 1.02 + 200);
      }
    }
  });
});

describe('event bounds: truncateUtf8', () => {
  it('cuts by bytes at a character boundary, never inside a character or a surrogate pair', () => {
    expect(truncateUtf8('abc', 2)).toBe('ab');
    expect(truncateUtf8('字字字', 7)).toBe('字字'); // 3 bytes each
    expect(truncateUtf8('a🎣b', 4)).toBe('a'); // the fish is 4 bytes: all or nothing
    expect(truncateUtf8('a🎣b', 5)).toBe('a🎣');
    expect(truncateUtf8('short', 1_000)).toBe('short');
    expect(truncateUtf8('x', 0)).toBe('');
  });
});

describe('event bounds: items', () => {
  it('leaves an item that fits as it is', () => {
    const e = item({ title: 'Rust engineer', body: cjk(10_000) });
    expect(boundItem(e, 1_000_000)).toBe(e);
  });

  it('cuts 50 fields of 16 Ki CJK characters (2.4 MB) to fit, and names every cut field', () => {
    const e = item(Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`f${i}`, cjk(16 * 1024)])));
    expect(itemWire(e)).toBeGreaterThan(2_400_000);
    const b = boundItem(e, 1_000_000);
    expect(itemWire(b) + RECORD_RESERVE_BYTES).toBeLessThanOrEqual(1_000_000);
    expect(itemWire(b)).toBeGreaterThan(950_000); // cut no more than needed
    expect(b.truncated_fields).toEqual(Object.keys(e.fields));
    for (const [k, v] of Object.entries(b.fields)) {
      expect(e.fields[k]!.startsWith(v)).toBe(true);
      expect(v).toMatch(/^字+$/);
    }
  });

  it('keeps the short fields whole and cuts the long ones to one level', () => {
    const e = item({ title: 'Senior engineer', price: '100 EUR', description: cjk(200_000), notes: 'n'.repeat(900_000) });
    const b = boundItem(e, 1_000_000);
    expect(b.fields.title).toBe('Senior engineer');
    expect(b.fields.price).toBe('100 EUR');
    expect([...b.truncated_fields].sort()).toEqual(['description', 'notes']);
    const cut = [Buffer.byteLength(b.fields.description!), Buffer.byteLength(b.fields.notes!)];
    expect(Math.abs(cut[0]! - cut[1]!)).toBeLessThanOrEqual(3); // the same cap, less the last partial character
    expect(itemWire(b) + RECORD_RESERVE_BYTES).toBeLessThanOrEqual(1_000_000);
  });
});

describe('event bounds: links', () => {
  it('keeps the links that fit, in order, and counts the rest', () => {
    const links = Array.from({ length: 5_000 }, (_, i) => `http://a.example/${'p'.repeat(400)}/${i}`);
    const e = page(links);
    expect(pageWire(e)).toBeGreaterThan(2_000_000);
    const b = boundLinks(e, 1_000_000);
    expect(pageWire(b) + RECORD_RESERVE_BYTES).toBeLessThanOrEqual(1_000_000);
    expect(b.links).toEqual(links.slice(0, b.links.length));
    expect(b.links_dropped).toBe(5_000 - b.links.length);
    expect(b.links.length).toBeGreaterThan(2_300);
    expect(boundLinks(page(links.slice(0, 100)), 1_000_000).links_dropped).toBe(0);
  });

  it('gives the sitemap URLs the room the links leave, in order, and counts the rest', () => {
    const links = Array.from({ length: 1_000 }, (_, i) => `http://a.example/${'l'.repeat(400)}/${i}`);
    const listed = Array.from({ length: 10_000 }, (_, i) => `http://a.example/listed/${'s'.repeat(100)}/${i}`);
    const e = { ...page(links), sitemap_urls: listed, sitemap_urls_dropped: 7 };
    const b = boundLinks(e, 1_000_000);
    expect(pageWire(b) + RECORD_RESERVE_BYTES).toBeLessThanOrEqual(1_000_000);
    expect(b.links).toEqual(links);
    expect(b.sitemap_urls).toEqual(listed.slice(0, b.sitemap_urls.length));
    expect(b.sitemap_urls.length).toBeGreaterThan(4_000);
    expect(b.sitemap_urls_dropped).toBe(7 + 10_000 - b.sitemap_urls.length);
    expect(boundLinks({ ...page(links), sitemap_urls: listed.slice(0, 100), sitemap_urls_dropped: 0 }, 1_000_000).sitemap_urls).toHaveLength(100);
  });
});
