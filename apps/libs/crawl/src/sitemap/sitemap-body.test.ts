import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { InvalidSitemapError } from '../errors.ts';
import { sitemapBody } from './sitemap-body.ts';

describe('sitemapBody', () => {
  it('passes plain XML through, cut at the byte limit', async () => {
    const xml = Buffer.from('<urlset><url><loc>https://a.test/é</loc></url></urlset>');
    expect(await sitemapBody(xml, 1024)).toEqual({ text: xml.toString('utf8'), cut: false, bytes: xml.length, error: null });
    const cut = await sitemapBody(xml, 10);
    expect(cut).toMatchObject({ text: '<urlset><u', cut: true, bytes: 10 });
  });

  it('inflates a gzip file, told by its magic bytes whatever its name', async () => {
    const xml = '<urlset><url><loc>https://a.test/1</loc></url></urlset>';
    expect(await sitemapBody(gzipSync(xml), 1024)).toEqual({ text: xml, cut: false, bytes: xml.length, error: null });
  });

  it('cuts a gzip bomb at the limit: 256 MiB of inflated bytes cost 1 MiB', async () => {
    const head = '<urlset><url><loc>https://a.test/1</loc></url>';
    const bomb = gzipSync(Buffer.concat([Buffer.from(head), Buffer.alloc(256 * 1024 * 1024, 0x20)]), { level: 9 });
    expect(bomb.length).toBeLessThan(1024 * 1024);
    const before = process.memoryUsage().arrayBuffers;
    const body = await sitemapBody(bomb, 1024 * 1024);
    expect(body.cut).toBe(true);
    expect(body.bytes).toBe(1024 * 1024);
    expect(body.text.startsWith(head)).toBe(true);
    // Inflated by chunks and stopped at the limit: never the whole 256 MiB in memory.
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(64 * 1024 * 1024);
  });

  it('gives a corrupt gzip file an error and what inflated before the damage', async () => {
    const xml = '<urlset>' + '<url><loc>https://a.test/1</loc></url>'.repeat(1000) + '</urlset>';
    const gz = gzipSync(xml);
    const damaged = Buffer.concat([gz.subarray(0, 200), Buffer.alloc(64, 0xff)]);
    const body = await sitemapBody(damaged, 1024 * 1024);
    expect(body.error).toBeInstanceOf(InvalidSitemapError);
    expect(body.error!.message).toMatch(/^corrupt gzip sitemap/);
  });
});
