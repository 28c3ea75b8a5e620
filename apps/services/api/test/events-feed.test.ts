/**
 * The WebSocket live feed over a real socket, fed from the real Kafka through streams' live
 * subscription: a client gets its own job's events in order and nothing of other users'.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { eventId, stableId, TOPICS } from '@trawl/streams';
import { connectFeed, eventually, sleep, startTestApi, type FeedMessage, type TestApi } from './support.ts';

let api: TestApi;
let wsBase: string;
const sockets: WebSocket[] = [];

beforeAll(async () => {
  api = await startTestApi({ live: true });
  const url = await api.app.listen({ host: '127.0.0.1', port: 0 });
  wsBase = url.replace('http', 'ws');
  // Resolves once the feed has its "latest" positions: every event produced from now on is seen.
  await api.app.liveFeed.ready;
});
afterAll(async () => {
  for (const s of sockets) s.terminate();
  await api?.close();
});

async function connect(path: string, headers: Record<string, string>): Promise<{ ws: WebSocket; messages: FeedMessage[] }> {
  const feed = await connectFeed(`${wsBase}${path}`, headers);
  sockets.push(feed.ws);
  return feed;
}

async function pageFetched(jobId: string, n: number): Promise<void> {
  const fetchId = stableId('fetch', jobId, n);
  await api.producer.emit(
    'PageFetched',
    {
      job_id: jobId, fetch_id: fetchId, url: `http://a.test/${n}`, final_url: `http://a.test/${n}`, status: 200, content_type: 'text/html',
      bytes: 100, fetch_ms: 5, render_mode: 'http', depth: 1, links: [], next_page: null, item_count: 0, links_dropped: 0, truncated: false, parsed: true, attempt: 1, content_hash: null, formats: [], etag: null, last_modified: null, from_cache: null, sitemap_urls: [], sitemap_urls_dropped: 0, content_refused: null, canonical_url: null, notes: [], throttle: null, simhash: null, near_duplicate_of: null, downloads: [],
    },
    { eventId: eventId('PageFetched', fetchId) },
  );
}

const events = (messages: FeedMessage[], jobId: string) => messages.filter((m) => m.type === 'event' && m.job_id === jobId);

describe('GET /events (WebSocket live feed)', () => {
  it("delivers the caller's own job events in order, and nothing of another user's", async () => {
    const alice = await api.user('alice');
    const bob = await api.user('bob');
    const aliceFeed = await connect('/events', alice.auth);
    const bobFeed = await connect('/events', bob.auth);
    expect(aliceFeed.messages[0]).toMatchObject({ type: 'hello', user_id: alice.user });

    const { job_id: aliceJob } = (await api.app.inject({
      method: 'POST', url: '/crawl', headers: alice.auth, payload: { start_urls: ['http://a.test/feed'], depth: 1 },
    })).json();
    const { job_id: bobJob } = (await api.app.inject({
      method: 'POST', url: '/crawl', headers: bob.auth, payload: { start_urls: ['http://b.test/feed'], depth: 1 },
    })).json();
    // A worker's pages for alice's job (not announcing the owner: the hub must know it).
    for (let n = 0; n < 5; n++) await pageFetched(aliceJob, n);

    const mine = await eventually(async () => {
      const e = events(aliceFeed.messages, aliceJob);
      return e.length >= 7 ? e : undefined;
    });
    expect(mine.map((m) => m.event)).toEqual(['CrawlRequested', 'JobDispatched', 'PageFetched', 'PageFetched', 'PageFetched', 'PageFetched', 'PageFetched']);
    expect(mine.slice(2).map((m) => m.data?.url)).toEqual([0, 1, 2, 3, 4].map((n) => `http://a.test/${n}`));
    expect(mine[0]?.data).toMatchObject({ job_id: aliceJob, user_id: alice.user, start_urls: ['http://a.test/feed'], occurred_at: expect.any(String) });
    // Log order within each topic-partition.
    for (const topic of [TOPICS.jobs, TOPICS.pages]) {
      const offsets = mine.filter((m) => (m as { topic?: string }).topic === topic).map((m) => BigInt(m.offset!));
      expect(offsets.length, topic).toBeGreaterThan(0);
      expect([...offsets].sort((a, b) => (a < b ? -1 : 1))).toEqual(offsets);
    }

    await eventually(async () => events(bobFeed.messages, bobJob).length >= 2);
    expect(events(bobFeed.messages, aliceJob)).toEqual([]);
    expect(events(aliceFeed.messages, bobJob)).toEqual([]);
    expect(bobFeed.messages.every((m) => m.type !== 'event' || m.job_id === bobJob)).toBe(true);
  });

  it('filters by job and by event type', async () => {
    const alice = await api.user('alice');
    const jobA = (await api.app.inject({ method: 'POST', url: '/crawl', headers: alice.auth, payload: { start_urls: ['http://a.test/f1'], depth: 0 } })).json().job_id;
    const jobB = (await api.app.inject({ method: 'POST', url: '/crawl', headers: alice.auth, payload: { start_urls: ['http://a.test/f2'], depth: 0 } })).json().job_id;
    const onlyA = await connect(`/events?job_id=${jobA}&types=PageFetched`, alice.auth);
    const all = await connect('/events', alice.auth);
    await pageFetched(jobB, 1);
    await pageFetched(jobA, 1);
    await pageFetched(jobA, 2);
    await eventually(async () => events(all.messages, jobA).length >= 2 && events(all.messages, jobB).length >= 1 && events(onlyA.messages, jobA).length >= 2);
    await sleep(200); // room for anything the filter should have kept out
    expect(onlyA.messages.filter((m) => m.type === 'event').map((m) => [m.job_id, m.event])).toEqual([
      [jobA, 'PageFetched'],
      [jobA, 'PageFetched'],
    ]);
  });

  it("refuses another user's job id (404) and a missing key (401) before the upgrade", async () => {
    const alice = await api.user('alice');
    const bob = await api.user('bob');
    const job = (await api.app.inject({ method: 'POST', url: '/crawl', headers: alice.auth, payload: { start_urls: ['http://a.test/x'], depth: 0 } })).json().job_id;
    await expect(connect(`/events?job_id=${job}`, bob.auth)).rejects.toMatchObject({ status: 404 });
    await expect(connect('/events', {})).rejects.toMatchObject({ status: 401 });
    await expect(connect('/events?types=Nonsense', alice.auth)).rejects.toMatchObject({ status: 400 });
    const plain = await api.app.inject({ method: 'GET', url: '/events', headers: alice.auth });
    expect(plain.statusCode).toBe(426);
    expect(plain.json().error.code).toBe('UPGRADE_REQUIRED');
    // Browsers: the key as a query parameter.
    const viaQuery = await connect(`/events?access_token=${alice.key}`, {});
    expect(viaQuery.messages[0]).toMatchObject({ type: 'hello', user_id: alice.user });
  });

  it('checks up to 100 job ids in one query, and a plain GET (426) or a user at the stream cap in none', async () => {
    const alice = await api.user('alice');
    const ids = Array.from({ length: 100 }, () => crypto.randomUUID());
    await api.db.pool.query(`INSERT INTO api_jobs (job_id, user_id, dedupe_key, request) SELECT id, $2, id, '{}'::jsonb FROM unnest($1::text[]) AS id`, [ids, alice.user]);
    const pool = api.app.db as unknown as { query: (...args: unknown[]) => unknown };
    const query = pool.query;
    let queries = 0;
    pool.query = (...args: unknown[]) => {
      queries++;
      return query.apply(pool, args);
    };
    try {
      const feed = await connect(`/events?job_id=${ids.join(',')}`, alice.auth);
      expect(feed.messages[0]).toMatchObject({ type: 'hello', job_ids: ids });
      expect(queries).toBe(1);
      queries = 0;
      const plain = await api.app.inject({ method: 'GET', url: `/events?job_id=${ids.join(',')}`, headers: alice.auth });
      expect(plain.statusCode).toBe(426);
      expect(queries).toBe(0);
      // One id not the caller's among 100: refused, still one query.
      queries = 0;
      await expect(connect(`/events?job_id=${[...ids.slice(1), crypto.randomUUID()].join(',')}`, alice.auth)).rejects.toMatchObject({ status: 404 });
      expect(queries).toBe(1);
    } finally {
      pool.query = query;
    }
  });
});
