/**
 * The storage quota at the worker, against the real Postgres (the quota tables of @trawl/store, a
 * fresh database) and the real S3 (a fresh bucket): a user at their `storage_bytes` gets pages
 * without content — nothing written, the PageFetched naming STORAGE_QUOTA_EXCEEDED — while another
 * user's pages are stored as before; the figure is read once per user per few seconds, not per
 * page; a database that does not answer stores the page (fails open).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { ContentStore, contentHash, contentStoreConfig } from '@trawl/content';
import { testContentStore } from '@trawl/content/testing';
import { pageEvents, type FetchResult, type FetchWithSpec, type ProcessedPage } from '@trawl/crawl';
import { CONFIG_MIGRATIONS, createPool, crawlSpec, DEFAULT_QUOTAS, inTransaction, migrate, recordJobs, setUserQuotas, type Pool } from '@trawl/store';
import { createTestDatabase, type TestDatabase } from '@trawl/store/testing';
import { testLogger } from '@trawl/streams/testing';
import { Registry } from 'prom-client';
import { PageContentStore } from '../src/page-content-store.ts';
import { STORAGE_QUOTA_EXCEEDED, StorageQuota } from '../src/storage-quota.ts';

const logger = testLogger('worker-storage-quota');
const HTML = '<html><body><h1>Stock</h1><p>in stock</p></body></html>';

class CountingStore extends ContentStore {
  puts = 0;
  override put(body: Uint8Array, mediaType: string) {
    this.puts++;
    return super.put(body, mediaType);
  }
  override write(body: Uint8Array, mediaType: string, hash?: string) {
    this.puts++;
    return super.write(body, mediaType, hash);
  }
}

function counted(pool: Pool): { pool: Pool; count: () => number } {
  let n = 0;
  const proxy = new Proxy(pool, {
    get(target, prop, receiver) {
      if (prop !== 'query') return Reflect.get(target, prop, receiver) as unknown;
      return (...args: unknown[]) => {
        n++;
        return (target.query as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { pool: proxy, count: () => n };
}

const request = (jobId: string, formats: string[], over: { cached?: FetchWithSpec['cached'] } = {}): FetchWithSpec => ({
  event_id: randomUUID(),
  occurred_at: new Date(),
  causation_id: null,
  job_id: jobId,
  fetch_id: randomUUID(),
  url: 'https://shop.example/stock',
  depth: 0,
  referrer: null,
  spec: { ...crawlSpec(null), formats, store_in_cache: true },
  spec_hash: null,
  params: {},
  cached: over.cached ?? null,
  user_id: null,
});
const result = (body: string): FetchResult => ({
  url: 'https://shop.example/stock', finalUrl: 'https://shop.example/stock', status: 200, contentType: 'text/html', bytes: body.length, wireBytes: body.length,
  fetchMs: 3, body, isHtml: true, truncated: false, redirects: [], retryAfterMs: null, charset: 'utf-8', renderMode: 'http',
});
const page = (body: string, cache?: ProcessedPage['cache']): ProcessedPage => ({ result: result(body), links: [], items: [], nextPage: null, parsed: true, cut: null, ...(cache ? { cache } : {}) });

let db: TestDatabase;
let s3: ContentStore;
let store: CountingStore;
const full = { user: `full-${randomUUID().slice(0, 8)}`, job: randomUUID() };
const roomy = { user: `roomy-${randomUUID().slice(0, 8)}`, job: randomUUID() };
beforeAll(async () => {
  db = await createTestDatabase('trawl_worker_quota');
  await migrate(db.pool, 'config', CONFIG_MIGRATIONS);
  // The jobs as the API or the dispatcher records them when they start (the quota ledger names their users).
  await inTransaction(db.pool, (tx) => recordJobs(tx, [{ job_id: full.job, user_id: full.user, max_pages: 100 }, { job_id: roomy.job, user_id: roomy.user, max_pages: 100 }]));
  // No content at all for `full`: 0 bytes used of 0 is the quota reached.
  await setUserQuotas(db.pool, full.user, { storage_bytes: 0 });
  s3 = await testContentStore();
  store = new CountingStore({ ...contentStoreConfig(), bucket: s3.bucket });
});
afterAll(async () => {
  await s3?.delete(await s3.list());
  s3?.close();
  store?.close();
  await db?.drop();
});

describe('storage quota at the worker', () => {
  it('keeps nothing of a page of a user at their quota, names STORAGE_QUOTA_EXCEEDED in its PageFetched, and stores another user\'s page', async () => {
    const metrics = new Registry();
    const content = new PageContentStore(store, logger, { quota: new StorageQuota(db.pool, { defaults: DEFAULT_QUOTAS, logger }), metrics });
    const before = store.puts;
    const req = request(full.job, ['html', 'markdown']);
    const p = page(`${HTML}<!-- full -->`);
    const refused = await content.store(req, p);
    expect(refused).toEqual({ contentHash: null, formats: [], refused: STORAGE_QUOTA_EXCEEDED });
    // The body for the HTTP cache is refused too.
    expect(await content.store(request(full.job, []), page(`${HTML}<!-- full, cache -->`))).toMatchObject({ contentHash: null, refused: STORAGE_QUOTA_EXCEEDED });
    // A page reused from the cache keeps naming the body it was parsed from; its formats are not written.
    const cachedHash = 'a'.repeat(64);
    expect(await content.store(request(full.job, ['markdown']), page(HTML, { reuse: 'not_modified', contentHash: cachedHash }))).toEqual({ contentHash: cachedHash, formats: [], refused: STORAGE_QUOTA_EXCEEDED });
    expect(store.puts).toBe(before);
    // The page itself succeeds: its PageFetched says what was not kept, and why.
    const { fetched } = pageEvents(req, p, 1, { content: refused! });
    expect(fetched).toMatchObject({ status: 200, content_hash: null, formats: [], content_refused: STORAGE_QUOTA_EXCEEDED });
    expect(await metrics.getSingleMetricAsString('trawl_worker_content_refused_total')).toMatch(/reason="STORAGE_QUOTA_EXCEEDED"} 3/);

    // Another user, under the default quota: stored as before, nothing refused.
    const body = `${HTML}<!-- roomy -->`;
    const kept = await content.store(request(roomy.job, ['html']), page(body));
    expect(kept).toMatchObject({ contentHash: contentHash(new TextEncoder().encode(body)), formats: [{ format: 'html' }] });
    expect(kept).not.toHaveProperty('refused');
    expect(await s3.has(kept!.contentHash!)).toBe(true);
    expect(pageEvents(request(roomy.job, ['html']), page(body), 1, { content: kept! }).fetched.content_refused).toBeNull();
  });

  it('reads a user\'s figure once per ttl, not once per page, and sees a raised quota after it', async () => {
    let now = 1_000_000;
    const { pool, count } = counted(db.pool);
    const quota = new StorageQuota(pool, { defaults: DEFAULT_QUOTAS, logger, ttlMs: 10_000, now: () => now });
    expect(await quota.mayStore(full.job)).toBe(false);
    const first = count();
    for (let i = 0; i < 50; i++) expect(await quota.mayStore(full.job)).toBe(false);
    expect(count()).toBe(first);
    await setUserQuotas(db.pool, full.user, { storage_bytes: 1_000_000 });
    try {
      expect(await quota.mayStore(full.job)).toBe(false);
      now += 10_001;
      expect(await quota.mayStore(full.job)).toBe(true);
    } finally {
      await setUserQuotas(db.pool, full.user, { storage_bytes: 0 });
    }
  });

  it('stores the page when the database does not answer (fails open)', async () => {
    const dead = createPool({ connectionString: 'postgres://nobody@127.0.0.1:9/none', connectionTimeoutMs: 1_000 });
    try {
      expect(await new StorageQuota(dead, { defaults: { ...DEFAULT_QUOTAS, storage_bytes: 0 }, logger }).mayStore(full.job)).toBe(true);
    } finally {
      await dead.end();
    }
  });
});
