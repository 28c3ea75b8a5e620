/**
 * The worker's side of the HTTP cache against the real S3 of the environment (the local stack's
 * S3Proxy, a fresh bucket): which pages have their body stored for the cache, that a store that
 * does not answer costs a page nothing (no failure, and no further attempt during the cool-down),
 * and that a stored body reads back — or, missing or unreachable, reads as absent, so the page is
 * fetched in full.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContentStore, contentHash, contentStoreConfig } from '@trawl/content';
import { testContentStore } from '@trawl/content/testing';
import { crawlSpec } from '@trawl/store';
import type { FetchResult, FetchWithSpec, ProcessedPage } from '@trawl/crawl';
import { testLogger } from '@trawl/streams/testing';
import { Registry } from 'prom-client';
import { PageContentStore } from '../src/page-content-store.ts';
import { StoredBodies } from '../src/stored-bodies.ts';

const logger = testLogger('worker-http-cache');
const HTML = '<html><body><h1>Stock</h1><a href="/next">next</a></body></html>';

/** Counts the calls that reach the real store: writes (with or without a HEAD first), and bucket checks. */
class CountingStore extends ContentStore {
  puts = 0;
  bucketChecks = 0;
  override put(body: Uint8Array, mediaType: string) {
    this.puts++;
    return super.put(body, mediaType);
  }
  override write(body: Uint8Array, mediaType: string, hash?: string) {
    this.puts++;
    return super.write(body, mediaType, hash);
  }
  override ensureBucket() {
    this.bucketChecks++;
    return super.ensureBucket();
  }
}

const request = (formats: string[] = [], over: { storeInCache?: boolean; cached?: FetchWithSpec['cached'] } = {}): FetchWithSpec => ({
  event_id: '0b6d9c1e-5a3f-5e7b-9c2d-000000000004',
  occurred_at: new Date(),
  causation_id: null,
  job_id: '6f1c2a4e-93b7-5d0a-8c1e-2b7f4d9a0e11',
  fetch_id: 'f1',
  url: 'https://shop.example/stock',
  depth: 0,
  referrer: null,
  spec: { ...crawlSpec(null), formats, store_in_cache: over.storeInCache ?? true },
  spec_hash: null,
  params: {},
  cached: over.cached ?? null,
  user_id: null,
});

const result = (over: Partial<FetchResult> = {}): FetchResult => ({
  url: 'https://shop.example/stock', finalUrl: 'https://shop.example/stock', status: 200, contentType: 'text/html', bytes: HTML.length, wireBytes: HTML.length,
  fetchMs: 3, body: HTML, isHtml: true, truncated: false, redirects: [], retryAfterMs: null, charset: 'utf-8', renderMode: 'http', ...over,
});
const page = (over: Partial<FetchResult> = {}, cache?: ProcessedPage['cache']): Pick<ProcessedPage, 'result' | 'cache'> => ({ result: result(over), ...(cache ? { cache } : {}) });

let s3: ContentStore;
let counting: CountingStore;
beforeAll(async () => {
  s3 = await testContentStore();
  counting = new CountingStore({ ...contentStoreConfig(), bucket: s3.bucket });
});
afterAll(async () => {
  await s3.delete(await s3.list());
  s3.close();
  counting.close();
});

describe('bodies stored for the HTTP cache', () => {
  it('stores a whole 2xx HTML page fetched over HTTP, and nothing of what the cache cannot serve', async () => {
    const store = new PageContentStore(counting, logger);
    const stored = await store.store(request(), page());
    expect(stored).toEqual({ contentHash: contentHash(new TextEncoder().encode(HTML)), formats: [] });
    expect(await s3.has(stored!.contentHash!)).toBe(true);
    const before = counting.puts;
    for (const over of [{ renderMode: 'browser' as const }, { truncated: true }, { status: 203, body: null, isHtml: false }, { status: 304 }]) {
      expect(await store.store(request(), page(over)), JSON.stringify(over)).toBeUndefined();
    }
    expect(counting.puts).toBe(before);
  });

  it('names the stored body of a page served from the cache without writing it again; derives formats from it when asked', async () => {
    const store = new PageContentStore(counting, logger);
    const hash = contentHash(new TextEncoder().encode(HTML));
    const before = counting.puts;
    expect(await store.store(request(), page({}, { reuse: 'not_modified', contentHash: hash }))).toEqual({ contentHash: hash, formats: [] });
    expect(counting.puts).toBe(before);
    const withFormats = await store.store(request(['markdown']), page({}, { reuse: 'max_age', contentHash: hash }));
    expect(withFormats?.contentHash).toBe(hash);
    expect(withFormats?.formats.map((f) => f.format)).toEqual(['markdown']);
  });

  it('stores nothing for a job that keeps no bodies (store_in_cache false), unless the page is in the cache already', async () => {
    const store = new PageContentStore(counting, logger);
    const before = counting.puts;
    expect(await store.store(request([], { storeInCache: false }), page({ body: `${HTML}<!-- once -->` }))).toBeUndefined();
    expect(counting.puts).toBe(before);
    // In the user's cache (the request carries its entry): the entry is kept up to date with the new body.
    const entry = { content_hash: 'a'.repeat(64), fetched_at: new Date(0), final_url: 'https://shop.example/stock', status: 200, content_type: 'text/html', etag: '"v1"', last_modified: null };
    const changed = `${HTML}<!-- changed -->`;
    const stored = await store.store(request([], { storeInCache: false, cached: entry }), page({ body: changed }));
    expect(stored).toEqual({ contentHash: contentHash(new TextEncoder().encode(changed)), formats: [] });
    expect(await s3.has(stored!.contentHash!)).toBe(true);
    // Formats are the job's request, whatever it keeps for the cache.
    expect((await store.store(request(['text'], { storeInCache: false }), page({ body: `${HTML}<!-- once, text -->` })))?.formats.map((f) => f.format)).toEqual(['text']);
  });

  it('stores nothing for the cache with TRAWL_HTTP_CACHE off (formats are still kept)', async () => {
    const off = new PageContentStore(counting, logger, { httpCache: false });
    expect(await off.store(request(), page({ body: `${HTML}<!-- off -->` }))).toBeUndefined();
    expect((await off.store(request(['html']), page({ body: `${HTML}<!-- off, html -->` })))?.formats.map((f) => f.format)).toEqual(['html']);
  });

  it('leaves a page uncached when the store does not answer, and tries again only after the cool-down', async () => {
    let now = 1_000_000;
    const dead = new CountingStore({ ...contentStoreConfig(), endpoint: 'http://127.0.0.1:9', bucket: s3.bucket });
    try {
      const store = new PageContentStore(dead, logger, { now: () => now });
      const attempts = () => dead.puts + dead.bucketChecks;
      expect(await store.store(request(), page())).toBeUndefined();
      expect(attempts()).toBe(1);
      expect(await store.store(request(), page())).toBeUndefined();
      expect(attempts()).toBe(1);
      now += 30_001;
      expect(await store.store(request(), page())).toBeUndefined();
      expect(attempts()).toBe(2);
      // Formats are the job's promise, not the cache's: their store failing fails the page (retried).
      await expect(store.store(request(['html']), page())).rejects.toThrow();
    } finally {
      dead.close();
    }
  }, 120_000);
});

describe('bodies read back for the HTTP cache', () => {
  it('reads a stored body, and reads a missing or unreachable one as absent (the page is then fetched in full)', async () => {
    const metrics = new Registry();
    const bodies = new StoredBodies(s3, logger, metrics);
    const put = await s3.put(new TextEncoder().encode('<p>kept</p>'), 'text/html');
    expect(await bodies.body(put.hash)).toBe('<p>kept</p>');
    await s3.delete([put.hash]);
    expect(await bodies.body(put.hash)).toBeUndefined();
    const dead = new ContentStore({ ...contentStoreConfig(), endpoint: 'http://127.0.0.1:9', bucket: s3.bucket });
    try {
      expect(await new StoredBodies(dead, logger, metrics).body(put.hash)).toBeUndefined();
    } finally {
      dead.close();
    }
    const reads = await metrics.getSingleMetricAsString('trawl_worker_cached_body_reads_total');
    expect(reads).toMatch(/result="found"} 1/);
    expect(reads).toMatch(/result="missing"} 1/);
    expect(reads).toMatch(/result="unreadable"} 1/);
  }, 120_000);

  it("reads strictly for a re-extraction: a missing body is absent, an unreachable store a retriable failure (it has no fetch to fall back on)", async () => {
    const put = await s3.put(new TextEncoder().encode('<p>kept</p>'), 'text/html');
    await s3.delete([put.hash]);
    expect(await new StoredBodies(s3, logger, new Registry(), { strict: true }).body(put.hash)).toBeUndefined();
    const dead = new ContentStore({ ...contentStoreConfig(), endpoint: 'http://127.0.0.1:9', bucket: s3.bucket });
    try {
      await expect(new StoredBodies(dead, logger, new Registry(), { strict: true }).body(put.hash)).rejects.toMatchObject({ retriable: true });
    } finally {
      dead.close();
    }
  }, 120_000);
});
