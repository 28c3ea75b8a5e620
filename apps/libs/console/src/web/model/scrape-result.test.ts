import { describe, expect, it } from 'vitest';
import { cellText, isPending, itemColumns, scrapeBody, scrapeSections, ScrapeFormError, type ScrapeResult } from './scrape-result.ts';

const JOB = '0c5e1f7a-2b3d-4e4f-8a9b-1c2d3e4f5a6b';
const metadata = { title: 'Hostile', description: null, language: 'en', canonical: null, social: {}, status_code: 200, content_type: 'text/html', fetch_ms: 3, render_mode: 'http', from_cache: null };

describe('the scrape form', () => {
  it('asks for the formats ticked in a fixed order, markdown when none, with a spider and a wait when given', () => {
    expect(scrapeBody({ url: ' https://shop.example/a ', formats: ['metadata', 'markdown'], spider: '', timeoutSeconds: '' })).toEqual({ url: 'https://shop.example/a', formats: ['markdown', 'metadata'] });
    expect(scrapeBody({ url: 'https://shop.example/', formats: [], spider: 'shop', timeoutSeconds: '2.5' })).toEqual({ url: 'https://shop.example/', formats: ['markdown'], spider: 'shop', timeout_ms: 2500 });
    // A value the form does not offer is not sent.
    expect(scrapeBody({ url: 'https://shop.example/', formats: ['json', 'links'], spider: '', timeoutSeconds: '' }).formats).toEqual(['links']);
  });

  it('refuses a URL that is not absolute http(s), and a wait that is no number of seconds', () => {
    for (const url of ['', 'shop.example', 'javascript:alert(1)', 'ftp://x.example/']) {
      expect(() => scrapeBody({ url, formats: [], spider: '', timeoutSeconds: '' }), url).toThrow(ScrapeFormError);
    }
    expect(() => scrapeBody({ url: 'https://x.example/', formats: [], spider: '', timeoutSeconds: '-1' })).toThrow(ScrapeFormError);
  });
});

describe("the scrape answer's sections", () => {
  const result: ScrapeResult = {
    job_id: JOB,
    url: 'https://shop.example/',
    ok: true,
    status: 200,
    final_url: 'https://shop.example/',
    metadata,
    formats: { markdown: '# Hi <script>alert(1)</script>', html: '<img src=x onerror="alert(2)">', links: ['https://shop.example/b', 'https://shop.example/c'], screenshot: `/jobs/${JOB}/pages/f1/content?format=screenshot`, text: null },
    item_count: 0,
  };

  it('gives each format asked for in the form order, then the metadata as JSON text; markup stays text', () => {
    const sections = scrapeSections(result, ['links', 'html', 'markdown', 'screenshot', 'text']);
    expect(sections.map((s) => [s.format, s.kind])).toEqual([['markdown', 'text'], ['html', 'text'], ['text', 'missing'], ['links', 'list'], ['screenshot', 'file'], ['metadata', 'text']]);
    expect(sections[0]).toEqual({ format: 'markdown', kind: 'text', text: '# Hi <script>alert(1)</script>' });
    expect(sections[1]).toEqual({ format: 'html', kind: 'text', text: '<img src=x onerror="alert(2)">' });
    expect(sections[3]).toEqual({ format: 'links', kind: 'list', lines: ['https://shop.example/b', 'https://shop.example/c'] });
    expect(sections[4]).toEqual({ format: 'screenshot', kind: 'file', path: `/jobs/${JOB}/pages/f1/content?format=screenshot` });
    expect(JSON.parse((sections[5] as { text: string }).text)).toEqual(metadata);
  });

  it('says why a format is missing: a failed page, links answered from the record', () => {
    const failed = scrapeSections({ job_id: JOB, url: 'https://x.example/', ok: false, status: 500, formats: {}, error: { code: 'HTTP_500', message: 'server error' } }, ['markdown', 'links']);
    expect(failed.map((s) => [s.format, s.kind])).toEqual([['markdown', 'missing'], ['links', 'missing']]);
    expect((failed[0] as { text: string }).text).toContain('failed');
  });

  it('tells a pending answer from a result', () => {
    expect(isPending({ job_id: JOB, status: 'pending', status_url: `/jobs/${JOB}/status`, result_url: `/scrape/${JOB}` })).toBe(true);
    expect(isPending(result)).toBe(false);
  });

  it("lays out items by the union of their fields, values as text", () => {
    expect(itemColumns([{ fields: { title: 'a' } }, { fields: { price: '1', title: 'b' } }])).toEqual(['price', 'title']);
    expect([cellText('<b>x</b>'), cellText(3), cellText(null), cellText({ a: 1 })]).toEqual(['<b>x</b>', '3', '', '{"a":1}']);
  });
});
