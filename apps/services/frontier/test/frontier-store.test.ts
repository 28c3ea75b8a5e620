/**
 * The frontier's state survives a restart and never goes stale: what one store instance saved,
 * another loads exactly; a cached state whose row changed elsewhere (a rebalance, a rolled-back
 * transaction) is reloaded.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { decideAll, initialFrontierState } from '@trawl/crawl';
import { samples } from '@trawl/schemas';
import { crawlSpec, inTransaction, migrate } from '@trawl/store';
import { createTestDatabase, type TestDatabase } from '@trawl/store/testing';
import { FrontierStore } from '../src/frontier-store.ts';
import { FRONTIER_MIGRATIONS } from '../src/migrations.ts';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
  await migrate(db.pool, 'frontier', FRONTIER_MIGRATIONS);
});
afterAll(async () => db?.drop());

function dispatched(jobId: string) {
  return {
    type: 'JobDispatched' as const,
    data: {
      ...samples.JobDispatched,
      job_id: jobId,
      start_urls: ['http://site.test/a', 'http://site.test/b'],
      spec: crawlSpec(null, { depth: 2, max_pages: 100 }),
    },
  };
}

describe('frontier store', () => {
  it('saves what changed and loads the same state in a new instance', async () => {
    const jobId = randomUUID();
    const store = new FrontierStore();
    await inTransaction(db.pool, async (tx) => {
      const before = (await store.load(tx, [jobId])).get(jobId)!;
      expect(before.state).toEqual(initialFrontierState(jobId));
      const d = decideAll(before.state, [dispatched(jobId)]);
      expect(d.emit.filter((e) => e.type === 'FetchRequested')).toHaveLength(2);
      await store.save(tx, before, d.state, d.emit);
    });
    const fresh = new FrontierStore();
    const loaded = await inTransaction(db.pool, async (tx) => (await fresh.load(tx, [jobId])).get(jobId)!);
    expect(loaded.version).toBe(1);
    expect(loaded.state.status).toBe('running');
    expect(Object.keys(loaded.state.seen).sort()).toEqual(['http://site.test/a', 'http://site.test/b']);
    expect(Object.keys(loaded.state.outstanding)).toHaveLength(2);
    expect(loaded.state.counters.urls_seen).toBe(2);
  });

  it('keeps the count of sitemap URLs taken with the counters, across a restart', async () => {
    const jobId = randomUUID();
    const store = new FrontierStore();
    const root = 'http://site.test/';
    await inTransaction(db.pool, async (tx) => {
      const before = (await store.load(tx, [jobId])).get(jobId)!;
      const start = decideAll(before.state, [{ ...dispatched(jobId), data: { ...dispatched(jobId).data, start_urls: [root] } }]);
      const fetchId = Object.keys(start.state.outstanding)[0]!;
      const page = { ...samples.PageFetched, job_id: jobId, fetch_id: fetchId, url: root, depth: 0, links: [], next_page: null, sitemap_urls: ['http://site.test/s1', 'http://site.test/s2'] };
      const d = decideAll(start.state, [{ type: 'PageFetched', data: page }], { sitemapMaxUrls: 10 });
      expect(d.state.counters.sitemap_urls).toBe(2);
      await store.save(tx, before, d.state, [...start.emit, ...d.emit]);
    });
    const loaded = await inTransaction(db.pool, async (tx) => (await new FrontierStore().load(tx, [jobId])).get(jobId)!);
    expect(loaded.state.counters).toMatchObject({ urls_seen: 3, sitemap_urls: 2 });
    expect(Object.keys(loaded.state.seen).sort()).toEqual([root, 'http://site.test/s1', 'http://site.test/s2']);
  });

  it('reloads a cached state that another instance has moved on', async () => {
    const jobId = randomUUID();
    const a = new FrontierStore();
    const b = new FrontierStore();
    await inTransaction(db.pool, async (tx) => {
      const s = (await a.load(tx, [jobId])).get(jobId)!;
      const d = decideAll(s.state, [dispatched(jobId)]);
      await a.save(tx, s, d.state, d.emit);
    });
    // b takes over (a rebalance) and completes one fetch.
    await inTransaction(db.pool, async (tx) => {
      const s = (await b.load(tx, [jobId])).get(jobId)!;
      const [fetchId, fetch] = Object.entries(s.state.outstanding)[0]!;
      const page = { ...samples.PageFetched, job_id: jobId, fetch_id: fetchId, url: fetch.url, links: [], next_page: null, item_count: 0 };
      const d = decideAll(s.state, [{ type: 'PageFetched', data: page }]);
      await b.save(tx, s, d.state, d.emit);
    });
    // a must not decide from its stale cache.
    const again = await inTransaction(db.pool, async (tx) => (await a.load(tx, [jobId])).get(jobId)!);
    expect(again.version).toBe(2);
    expect(Object.keys(again.state.outstanding)).toHaveLength(1);
    expect(again.state.counters.pages_fetched).toBe(1);
  });
});
