import { describe, expect, it } from 'vitest';
import { InvalidSitemapError } from '../errors.ts';
import { parseSitemap } from './sitemap-parser.ts';

const urlset = (locs: string[]) =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${locs.map((l) => `<url><loc>${l}</loc><lastmod>2026-01-01</lastmod></url>`).join('\n')}\n</urlset>\n`;

describe('parseSitemap', () => {
  it('reads the locs of a urlset, entities and CDATA decoded, other elements ignored', async () => {
    const xml = urlset(['https://a.test/1', ' https://a.test/2?x=1&amp;y=2 ']).replace('</urlset>', '<url><loc><![CDATA[https://a.test/3]]></loc><image:image><image:loc>https://a.test/i.png</image:loc></image:image></url></urlset>');
    const parsed = await parseSitemap(xml);
    expect(parsed).toEqual({ kind: 'urlset', locs: ['https://a.test/1', 'https://a.test/2?x=1&y=2', 'https://a.test/3'], locsOver: 0, error: null });
  });

  it('reads the sitemaps of an index, prefixed names included', async () => {
    const xml = '<sm:sitemapindex xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9"><sm:sitemap><sm:loc>https://a.test/s1.xml.gz</sm:loc></sm:sitemap><sm:sitemap><sm:loc>https://a.test/s2.xml</sm:loc></sm:sitemap></sm:sitemapindex>';
    const parsed = await parseSitemap(xml);
    expect(parsed.kind).toBe('sitemapindex');
    expect(parsed.locs).toEqual(['https://a.test/s1.xml.gz', 'https://a.test/s2.xml']);
  });

  it('reads a 50,000-URL sitemap whole, in chunks, and counts locs past maxLocs', async () => {
    const locs = Array.from({ length: 50_000 }, (_, i) => `https://a.test/p/${i}`);
    const xml = urlset(locs);
    const parsed = await parseSitemap(xml, { chunkChars: 64 * 1024 });
    expect(parsed.locs).toHaveLength(50_000);
    expect(parsed.locs[49_999]).toBe('https://a.test/p/49999');
    const capped = await parseSitemap(xml, { maxLocs: 100 });
    expect(capped.locs).toEqual(locs.slice(0, 100));
    expect(capped.locsOver).toBe(49_900);
  });

  it('gives malformed XML a clear error naming the line, and keeps the locs read before it', async () => {
    const xml = '<urlset>\n<url><loc>https://a.test/1</loc></url>\n<url><loc>https://a.test/2</loc></url>\n<url><loc>https://a.test/3</lo></url>\n</urlset>';
    const parsed = await parseSitemap(xml);
    expect(parsed.locs).toEqual(['https://a.test/1', 'https://a.test/2']);
    expect(parsed.error).toBeInstanceOf(InvalidSitemapError);
    expect(parsed.error!.message).toMatch(/^malformed XML: .*\(line 4\)$/);
  });

  it('refuses a document whose root is not a sitemap (an HTML page served at /sitemap.xml)', async () => {
    const parsed = await parseSitemap('<html><body><a href="/x">x</a></body></html>');
    expect(parsed.locs).toEqual([]);
    expect(parsed.error?.message).toMatch(/not a sitemap: the root element is <html>/);
  });

  it('keeps the locs of a document cut mid-element, with the error', async () => {
    const xml = urlset(['https://a.test/1', 'https://a.test/2']);
    const parsed = await parseSitemap(xml.slice(0, xml.indexOf('https://a.test/2') + 5));
    expect(parsed.locs).toEqual(['https://a.test/1']);
    expect(parsed.error).toBeInstanceOf(InvalidSitemapError);
  });

  it('reads a text sitemap: one URL a line, anything else ignored', async () => {
    const parsed = await parseSitemap('\ufeffhttps://a.test/1\r\nnot a url\nhttp://a.test/2\n');
    expect(parsed).toEqual({ kind: 'text', locs: ['https://a.test/1', 'http://a.test/2'], locsOver: 0, error: null });
  });

  it('an empty document is no sitemap', async () => {
    expect((await parseSitemap('')).error?.message).toMatch(/not a sitemap: the document is empty/);
  });
});
