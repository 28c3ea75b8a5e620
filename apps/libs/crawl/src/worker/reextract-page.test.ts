/**
 * A re-extraction in the PageProcessor: the stored body is parsed under the request's spec, and
 * nothing is fetched — the fetcher and robots.txt here fail the test if they are asked anything.
 */
import type { CachedPage, CrawlSpec } from '@trawl/schemas';
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { NotStoredError } from '../errors.ts';
import { HostLimiter } from '../politeness/host-limiter.ts';
import { RobotsCache } from '../politeness/robots.ts';
import { testSpec } from '../rules/test-spec.ts';
import type { FetchWithSpec } from '../spec/spec-reference.ts';
import { fetchId } from '../url/normalise.ts';
import { PageProcessor } from './page-processor.ts';
import type { PageFetcher } from '../fetch/page-fetcher.ts';

const JOB = '5a1c2a4e-93b7-5d0a-8c1e-2b7f4d9a0e11';
const SOURCE = '0c5e1f7a-2b3d-5e4f-8a9b-1c2d3e4f5a6b';
const URL_ = 'http://site.example/list';
const HTML = '<!doctype html><html><body><article class="item"><h2>First</h2><a class="more" href="/1">more</a></article><article class="item"><h2>Second</h2><a class="more" href="/2">more</a></article></body></html>';
const sha = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

let asked = 0;
const network: PageFetcher = {
  fetch: async (url) => {
    asked++;
    throw new Error(`a re-extraction fetched ${url}`);
  },
};
const bodies = new Map([[sha(HTML), HTML]]);
const processor = new PageProcessor({ http: network, robots: new RobotsCache(network), limiter: new HostLimiter({}), cache: { body: async (hash) => bodies.get(hash) } });

const entry = (hash: string, contentType: string | null = 'text/html; charset=utf-8'): CachedPage => ({
  content_hash: hash, fetched_at: new Date('2026-11-01T00:00:00Z'), final_url: `${URL_}?final`, status: 200, content_type: contentType, etag: '"v1"', last_modified: null,
});
const request = (cached: CachedPage | null, over: Partial<CrawlSpec> = {}): FetchWithSpec => ({
  event_id: '0b6d9c1e-5a3f-5e7b-9c2d-000000000009', occurred_at: new Date(), causation_id: null, job_id: JOB, fetch_id: fetchId(JOB, URL_), url: URL_, depth: 2, referrer: null,
  // Request options and a browser are the crawl's; a re-extraction uses none of them.
  spec: testSpec({ reextract_of: SOURCE, item_root: 'article.item', item_fields: [{ name: 'title', selector: 'h2', attribute: null, xpath: null, transforms: [] }], requires_browser: true, headers: { 'x-a': 'b' }, ...over }),
  spec_hash: null, params: {}, cached, user_id: null,
});

describe('PageProcessor: a re-extraction (CrawlSpec.reextract_of)', () => {
  it('parses the stored body under its own spec, as reused without a request, and asks the network nothing', async () => {
    const page = await processor.process(request(entry(sha(HTML))));
    expect(page.items.map((i) => i.fields)).toEqual([{ title: 'First' }, { title: 'Second' }]);
    expect(page.cache).toEqual({ reuse: 'max_age', contentHash: sha(HTML) });
    expect(page.result).toMatchObject({ finalUrl: `${URL_}?final`, status: 200, renderMode: 'http', wireBytes: 0, bytes: Buffer.byteLength(HTML) });
    expect(page.parsed).toBe(true);
    expect(asked).toBe(0);
  });

  it('fails NOT_STORED, not retried, for a page without a stored body or whose body is gone', async () => {
    for (const cached of [null, entry(sha('deleted since'))]) {
      const err = await processor.process(request(cached)).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(NotStoredError);
      expect(err).toMatchObject({ code: 'TRAWL_NOT_STORED', retriable: false });
    }
    expect(asked).toBe(0);
  });

  it('keeps a stored body that is not HTML unparsed', async () => {
    const page = await processor.process(request(entry(sha(HTML), 'application/pdf')));
    expect({ parsed: page.parsed, items: page.items.length }).toEqual({ parsed: false, items: 0 });
  });
});
