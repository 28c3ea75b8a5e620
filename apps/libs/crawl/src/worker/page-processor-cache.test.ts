/**
 * The HTTP cache in the PageProcessor, against a real HTTP server (the generated test site, with
 * ETags and Last-Modified) and the real fetcher: what goes on the wire for each cache plan, and that
 * a page reused from its stored body parses to what a full fetch of it gives. The stored bodies are
 * a map here (the worker reads them from S3; apps/harness/e2e's recrawl test runs that path).
 */
import type { CachedPage } from '@trawl/schemas';
import { createTestSite, type TestSite } from '@trawl/demo-site';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { HttpFetcher } from '../fetch/http-fetcher.ts';
import { HostLimiter } from '../politeness/host-limiter.ts';
import { RobotsCache } from '../politeness/robots.ts';
import { testSpec } from '../rules/test-spec.ts';
import { AddressPolicy } from '../safety/address-policy.ts';
import { parseAllowList } from '../safety/allow-list.ts';
import { startLocalServer } from '../testing/local-server.ts';
import { fetchId } from '../url/normalise.ts';
import { createHash } from 'node:crypto';
import { PageProcessor, type CachedBodies, type ProcessedPage } from './page-processor.ts';
import type { FetchWithSpec } from '../spec/spec-reference.ts';
import type { CrawlSpec } from '@trawl/schemas';

const JOB = '3e1c2a4e-93b7-5d0a-8c1e-2b7f4d9a0e11';
const policy = new AddressPolicy(parseAllowList('127.0.0.1/32'));
const sha = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

class MapBodies implements CachedBodies {
  readonly bodies = new Map<string, string>();
  reads = 0;
  async body(hash: string): Promise<string | undefined> {
    this.reads++;
    return this.bodies.get(hash);
  }
}

let site: TestSite;
let fetcher: HttpFetcher;
let bodies: MapBodies;
let processor: PageProcessor;
let spec: CrawlSpec;

beforeAll(async () => {
  site = await createTestSite({ pages: 13, linksPerPage: 3, itemsPerPage: 2 });
  fetcher = new HttpFetcher({ policy, totalTimeoutMs: 10_000 });
  spec = testSpec({ max_depth: 3, ...site.spec });
});
afterAll(async () => {
  await fetcher.close();
  await site.close();
});
beforeEach(() => {
  bodies = new MapBodies();
  processor = new PageProcessor({ http: fetcher, robots: new RobotsCache(fetcher), limiter: new HostLimiter({}), cache: bodies });
});

const request = (url: string, cached: CachedPage | null, over: Partial<CrawlSpec> = {}): FetchWithSpec => ({
  event_id: '0b6d9c1e-5a3f-5e7b-9c2d-000000000004',
  occurred_at: new Date(),
  causation_id: null,
  job_id: JOB,
  fetch_id: fetchId(JOB, url),
  url,
  depth: 1,
  referrer: null,
  spec: { ...spec, ...over },
  spec_hash: null,
  params: {},
  cached,
  user_id: null,
});

/** A full fetch of `url`, stored as the cache would keep it: its body under its hash, its validators. */
async function fetchAndStore(url: string): Promise<{ page: ProcessedPage; entry: CachedPage }> {
  const page = await processor.process(request(url, null));
  const body = page.result.body!;
  bodies.bodies.set(sha(body), body);
  const entry: CachedPage = {
    content_hash: sha(body),
    fetched_at: new Date(Date.now() - 10 * 60_000),
    final_url: page.result.finalUrl,
    status: page.result.status,
    content_type: page.result.contentType,
    etag: page.result.validators?.etag ?? null,
    last_modified: page.result.validators?.lastModified ?? null,
  };
  return { page, entry };
}

const parse = (p: ProcessedPage) => ({ links: p.links, items: p.items, nextPage: p.nextPage, parsed: p.parsed });
const requestsOf = (path: string) => site.accessLog.entries().filter((e) => e.path === path);

describe('the HTTP cache in the page processor', () => {
  it('revalidates with the stored validators and reuses the stored body on 304: same links and items as a full fetch', async () => {
    for (const i of [3, 1, 2]) {
      // both validators, ETag only, Last-Modified only
      const url = site.urlOf(i);
      const path = new URL(url).pathname;
      const { page: full, entry } = await fetchAndStore(url);
      expect(entry.etag !== null || entry.last_modified !== null).toBe(true);
      site.reset();
      const again = await processor.process(request(url, entry));
      expect(requestsOf(path)).toEqual([expect.objectContaining({ ifNoneMatch: entry.etag, ifModifiedSince: entry.last_modified, status: 304 })]);
      expect(again.cache).toEqual({ reuse: 'not_modified', contentHash: entry.content_hash });
      expect(parse(again)).toEqual(parse(full));
      expect(again.items.length).toBe(2);
      expect(again.result).toMatchObject({ status: 200, finalUrl: entry.final_url, body: full.result.body, validators: { etag: entry.etag, lastModified: entry.last_modified } });
    }
  });

  it('fetches a changed page in full: its new body, its new validators, no cache mark', async () => {
    const url = site.urlOf(7);
    const { entry } = await fetchAndStore(url);
    site.change([7]);
    site.reset();
    const again = await processor.process(request(url, entry));
    expect(requestsOf('/p/7')).toEqual([expect.objectContaining({ ifNoneMatch: '"p7-r1"', status: 200 })]);
    expect(again.cache).toBeUndefined();
    expect(again.result.body).toContain('revision 2');
    expect(again.result.validators?.etag).toBe('"p7-r2"');
  });

  it('within max_age makes no request at all, not even for robots.txt', async () => {
    const url = site.urlOf(5);
    const { page: full, entry } = await fetchAndStore(url);
    // A fresh processor: its robots.txt cache is empty, so a request for it would show.
    const cold = new PageProcessor({ http: fetcher, robots: new RobotsCache(fetcher), limiter: new HostLimiter({}), cache: bodies });
    site.reset();
    const reused = await cold.process(request(url, entry, { max_age: 3600 }));
    expect(site.accessLog.entries()).toEqual([]);
    expect(reused.cache).toEqual({ reuse: 'max_age', contentHash: entry.content_hash });
    expect(parse(reused)).toEqual(parse(full));
    expect(reused.result.wireBytes).toBe(0);
    // Past max_age it asks the site again.
    const stale = await cold.process(request(url, { ...entry, fetched_at: new Date(Date.now() - 3_601_000) }, { max_age: 3600 }));
    expect(stale.cache?.reuse).toBe('not_modified');
    expect(requestsOf('/p/5')).toHaveLength(1);
  });

  it('fetches in full, once and without conditions, when the stored body is missing', async () => {
    const url = site.urlOf(6);
    const { entry } = await fetchAndStore(url);
    bodies.bodies.clear();
    site.reset();
    const again = await processor.process(request(url, entry, { max_age: 3600 }));
    expect(requestsOf('/p/6')).toEqual([expect.objectContaining({ ifNoneMatch: null, ifModifiedSince: null, status: 200 })]);
    expect(again.cache).toBeUndefined();
    expect(again.parsed).toBe(true);
  });

  it('with ignore_cache, neither reuses nor revalidates, and reads no stored body', async () => {
    const url = site.urlOf(3);
    const { entry } = await fetchAndStore(url);
    site.reset();
    const reads = bodies.reads;
    const again = await processor.process(request(url, entry, { max_age: 3600, ignore_cache: true }));
    expect(requestsOf('/p/3')).toEqual([expect.objectContaining({ ifNoneMatch: null, ifModifiedSince: null, status: 200 })]);
    expect(again.cache).toBeUndefined();
    expect(bodies.reads).toBe(reads);
  });

  it('without a cache port, ignores the entry a request carries', async () => {
    const url = site.urlOf(3);
    const { entry } = await fetchAndStore(url);
    site.reset();
    const plain = new PageProcessor({ http: fetcher, robots: new RobotsCache(fetcher), limiter: new HostLimiter({}) });
    const again = await plain.process(request(url, entry, { max_age: 3600 }));
    expect(requestsOf('/p/3')).toEqual([expect.objectContaining({ ifNoneMatch: null, status: 200 })]);
    expect(again.cache).toBeUndefined();
  });
});

describe('conditional headers and redirects', () => {
  it('go only to the hop the stored page came from, so a 304 always answers for it', async () => {
    const seen: Record<string, string | undefined>[] = [];
    const server = await startLocalServer({
      '/robots.txt': (_req, res) => void res.writeHead(404).end(),
      '/old': (req, res) => {
        seen.push({ path: '/old', inm: req.headers['if-none-match'] });
        res.writeHead(301, { location: '/new' }).end();
      },
      '/new': (req, res) => {
        seen.push({ path: '/new', inm: req.headers['if-none-match'] });
        if (req.headers['if-none-match'] === '"n1"') return void res.writeHead(304, { etag: '"n1"' }).end();
        res.writeHead(200, { 'content-type': 'text/html', etag: '"n1"' }).end('<a href="/x">x</a>');
      },
    });
    try {
      const fetcher2 = new HttpFetcher({ policy });
      const store = new MapBodies();
      const body = '<a href="/stored">stored</a>';
      store.bodies.set(sha(body), body);
      const p = new PageProcessor({ http: fetcher2, robots: new RobotsCache(fetcher2), limiter: new HostLimiter({}), cache: store });
      const entry: CachedPage = { content_hash: sha(body), fetched_at: new Date(0), final_url: `${server.origin}/new`, status: 200, content_type: 'text/html', etag: '"n1"', last_modified: null };
      const page = await p.process({ ...request(`${server.origin}/old`, entry), spec: testSpec({ same_host: true, max_depth: 2 }) });
      expect(seen).toEqual([{ path: '/old', inm: undefined }, { path: '/new', inm: '"n1"' }]);
      expect(page.cache?.reuse).toBe('not_modified');
      expect(page.links).toEqual([`${server.origin}/stored`]);
      // An entry that came from elsewhere: no condition goes anywhere, and the page is fetched in full.
      seen.length = 0;
      const moved = await p.process({ ...request(`${server.origin}/old`, { ...entry, final_url: `${server.origin}/elsewhere` }), spec: testSpec({ same_host: true, max_depth: 2 }) });
      expect(seen).toEqual([{ path: '/old', inm: undefined }, { path: '/new', inm: undefined }]);
      expect(moved.cache).toBeUndefined();
      expect(moved.links).toEqual([`${server.origin}/x`]);
      await fetcher2.close();
    } finally {
      await server.close();
    }
  });
});
