/**
 * Parsing on a thread gives exactly what parsing in-line gives (links, pagination, items with
 * their keys), and a spec the thread refuses comes back as the same non-retriable error class.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_PARSE_LIMITS, InvalidSpecError, parsePage } from '@trawl/crawl';
import { crawlSpec } from '@trawl/store';
import { ParsePool } from '../src/parse/parse-pool.ts';

const pool = new ParsePool(2);
afterAll(() => pool.close());

const spec = {
  ...crawlSpec(null, { depth: 3, max_pages: 100 }),
  item_root: 'article.job',
  item_fields: [
    { name: 'title', selector: 'h2', attribute: null },
    { name: 'link', selector: 'a', attribute: 'href' },
  ],
};
const html = `<!doctype html><html><body>
  <article class="job"><h2>Kafka operator</h2><a href="/jobs/1">more</a></article>
  <article class="job"><h2>Data engineer</h2><a href="/jobs/2#x">more</a></article>
  <a href="/jobs?page=2">next</a> <a href="https://elsewhere.test/">off host</a> <a href="mailto:x@y.z">mail</a>
</body></html>`;
const input = { html, url: 'http://site.test/jobs', finalUrl: 'http://site.test/jobs' };

describe('parse pool', () => {
  it('parses on a thread exactly as in-line', async () => {
    const inline = parsePage({ ...input, spec, limits: DEFAULT_PARSE_LIMITS });
    const threaded = await pool.parse({ ...input, jobId: 'job-1', spec, limits: DEFAULT_PARSE_LIMITS });
    expect(threaded).toEqual({ links: inline.links, nextPage: inline.nextPage, items: inline.items, cut: inline.cut });
    expect(threaded.items).toHaveLength(2);
  });

  it('brings back what the limits cut, for the worker to log', async () => {
    const limits = { ...DEFAULT_PARSE_LIMITS, maxItems: 1 };
    const threaded = await pool.parse({ ...input, jobId: 'job-1', spec, limits });
    expect(threaded.cut).toEqual(parsePage({ ...input, spec, limits }).cut);
    expect(threaded.cut).toMatchObject({ itemsOverCount: 1 });
  });

  it('spreads many pages over its threads and answers each', async () => {
    const pages = await Promise.all(Array.from({ length: 50 }, (_, i) => pool.parse({ ...input, url: `http://site.test/jobs/${i}`, jobId: 'job-2', spec, limits: DEFAULT_PARSE_LIMITS })));
    expect(pages.map((p) => p.items.length)).toEqual(Array(50).fill(2));
  });

  it('turns an invalid spec into the non-retriable InvalidSpecError', async () => {
    const bad = { ...spec, include_patterns: ['(unclosed'] };
    await expect(pool.parse({ ...input, jobId: 'job-3', spec: bad, limits: DEFAULT_PARSE_LIMITS })).rejects.toBeInstanceOf(InvalidSpecError);
  });
});
