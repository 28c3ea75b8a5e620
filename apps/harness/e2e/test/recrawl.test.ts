/**
 * The HTTP cache end to end: a frontier, a worker and projector-pg as processes on the real stack
 * (Kafka, registry, Postgres, S3) crawl the generated test site, whose pages carry ETags and
 * Last-Modified and answer conditional requests, again and again as one user. The site's access log
 * is the ground truth of what went over the wire:
 *
 * 1. the first crawl (`store_in_cache`, as a recurring schedule's runs) fetches every page in full,
 *    and the read model http_cache gets one entry a page;
 * 2. after three pages changed and one stored body was deleted, the recrawl asks conditionally:
 *    304 for the unchanged pages, 200 for the changed ones, a plain full fetch for the page without
 *    a body; the job's page and item counts, and each page's links and items, equal the first run's;
 * 3. with max_age, the site sees no request at all, and the counts still equal;
 * 4. ignore_cache fetches everything in full, without conditions, and brings the entries up to date;
 *    another user's crawl fetches everything in full too, and, run once (no `store_in_cache`),
 *    stores nothing for the cache;
 * 5. `trawl replay pg` rebuilds the read models, http_cache included, to the live checksums.
 */
import { randomUUID } from 'node:crypto';
import { ContentStore, contentStoreConfig } from '@trawl/content';
import { createTestSite, type AccessEntry, type TestSite } from '@trawl/demo-site';
import type { CrawlSpec, JobCompleted, PageFetched } from '@trawl/schemas';
import { crawlSpec } from '@trawl/store';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Pipeline } from '../src/pipeline.ts';
import { trawlReplay } from './chaos/support.ts';

const USER = 'e2e-cache';
const PAGES = 40;
const DEPTH = 3;
/** Pages edited between the first crawl and the recrawl: Last-Modified only, ETag only, both. */
const CHANGED = [5, 7, 12];
/** The page whose stored body is deleted before the recrawl. */
const BODY_DELETED = 10;

let site: TestSite;
let pipeline: Pipeline;
let store: ContentStore | undefined;
const bucket = `trawl-e2e-${randomUUID().slice(0, 8)}`;

beforeAll(async () => {
  site = await createTestSite({ pages: PAGES, linksPerPage: 3, itemsPerPage: 2, traps: false });
  store = new ContentStore({ ...contentStoreConfig(), bucket });
  pipeline = await Pipeline.start({ env: { TRAWL_S3_BUCKET: bucket } });
  pipeline.spawn('frontier');
  pipeline.spawn('worker');
  pipeline.spawn('projector-pg');
});
afterAll(async () => {
  await pipeline?.stop();
  await site?.close();
  if (store) {
    await store.delete(await store.list()).catch(() => undefined);
    store.close();
  }
});

const pathOf = (url: string) => {
  const u = new URL(url);
  return u.pathname + u.search;
};

async function crawl(user: string, spec: Partial<CrawlSpec> = {}): Promise<{ jobId: string; completed: JobCompleted; pages: Map<string, PageFetched> }> {
  site.reset();
  const jobId = randomUUID();
  await pipeline.producer.emit(
    'JobDispatched',
    {
      job_id: jobId, user_id: user, target_id: null, schedule_id: null, search_url: site.home, start_urls: [site.home], keywords: [], location: null,
      spec: { ...crawlSpec(null, { depth: DEPTH, max_pages: 10_000 }), ...site.spec, ...spec }, attempt: 1, params: {},
    },
    { topic: pipeline.topics.jobs },
  );
  const events = await pipeline.waitFor((es) => es.some((e) => e.event.name === 'JobCompleted' && (e.event.value as JobCompleted).job_id === jobId), 240_000, `JobCompleted of ${jobId}`);
  const completed = events.find((e) => e.event.name === 'JobCompleted' && (e.event.value as JobCompleted).job_id === jobId)!.event.value as JobCompleted;
  const pages = new Map<string, PageFetched>();
  for (const e of events) {
    const v = e.event.value as PageFetched;
    if (e.event.name === 'PageFetched' && v.job_id === jobId && !pages.has(v.url)) pages.set(v.url, v);
  }
  return { jobId, completed, pages };
}

/** Until projector-pg holds `rows` cache entries of `user`, all from `jobId`. */
async function cacheHolds(user: string, jobId: string, rows: number): Promise<void> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const { rows: r } = await pipeline.db.pool
      .query<{ n: number; mine: number }>('SELECT count(*)::int AS n, count(*) FILTER (WHERE job_id = $2)::int AS mine FROM http_cache WHERE user_id = $1', [user, jobId])
      .catch(() => ({ rows: [{ n: -1, mine: -1 }] }));
    if (r[0]!.n === rows && r[0]!.mine === rows) return;
    if (Date.now() > deadline) throw new Error(`http_cache holds ${r[0]!.n} entries of ${user} (${r[0]!.mine} from ${jobId}), expected ${rows} from ${jobId}`);
    await new Promise((res) => setTimeout(res, 500));
  }
}

/** The job's row in projector-pg once it shows the job finished with all its pages and items (the three topics arrive apart). */
async function settledJob(jobId: string, items: number): Promise<Record<string, unknown>> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const { rows } = await pipeline.db.pool.query('SELECT status, pages_fetched, pages_failed, items_extracted FROM jobs WHERE job_id = $1', [jobId]);
    const row = rows[0] as Record<string, unknown> | undefined;
    if (row && row.status === 'finished' && row.pages_fetched === PAGES && row.items_extracted === items) return row;
    if (Date.now() > deadline) return row ?? {};
    await new Promise((res) => setTimeout(res, 500));
  }
}

const counts = (c: JobCompleted) => ({ pages_fetched: c.pages_fetched, pages_failed: c.pages_failed, items_extracted: c.items_extracted, urls_seen: c.urls_seen });
const parseOf = (pages: Map<string, PageFetched>) => new Map([...pages].map(([url, p]) => [url, { links: [...p.links].sort(), items: p.item_count }]));

it('recrawls conditionally (304s for what did not change), reuses within max_age without a request, and ignore_cache fetches everything', async () => {
  const expected = site.expected(DEPTH);
  expect(expected.fetched).toHaveLength(PAGES);
  const contentPaths = new Set(expected.fetched.map(pathOf));
  const served = (): readonly AccessEntry[] => site.accessLog.entries().filter((e) => contentPaths.has(e.path));
  const conditional = (e: AccessEntry) => e.ifNoneMatch !== null || e.ifModifiedSince !== null;

  // 1. The first crawl: everything in full.
  const first = await crawl(USER, { store_in_cache: true });
  expect(counts(first.completed)).toEqual({ pages_fetched: PAGES, pages_failed: 0, items_extracted: expected.items, urls_seen: PAGES });
  expect(served()).toHaveLength(PAGES);
  expect(served().filter(conditional)).toEqual([]);
  expect([...first.pages.values()].every((p) => p.from_cache === null && p.content_hash !== null)).toBe(true);
  await cacheHolds(USER, first.jobId, PAGES);

  // 2. Three pages change; one page's stored body goes; the recrawl.
  const changed = new Set(site.change(CHANGED).map(pathOf));
  const gone = await pipeline.db.pool.query<{ content_hash: string }>('SELECT content_hash FROM http_cache WHERE user_id = $1 AND url = $2', [USER, site.urlOf(BODY_DELETED)]);
  await store!.delete([gone.rows[0]!.content_hash]);
  const second = await crawl(USER);
  expect(counts(second.completed)).toEqual(counts(first.completed));
  expect(served()).toHaveLength(PAGES);
  const byPath = new Map(served().map((e) => [e.path, e]));
  for (const [path, e] of byPath) {
    const what = path === pathOf(site.urlOf(BODY_DELETED)) ? 'full' : changed.has(path) ? 'changed' : 'unchanged';
    expect({ path, what, conditional: conditional(e), status: e.status }).toEqual({ path, what, conditional: what !== 'full', status: what === 'unchanged' ? 304 : 200 });
  }
  expect(served().filter((e) => e.status === 304)).toHaveLength(PAGES - CHANGED.length - 1);
  // The 304 pages' links and items are re-emitted: every page parses as it did the first time.
  expect(parseOf(second.pages)).toEqual(parseOf(first.pages));
  for (const [url, p] of second.pages) {
    const reused = !changed.has(pathOf(url)) && url !== site.urlOf(BODY_DELETED);
    expect({ url, from_cache: p.from_cache }).toEqual({ url, from_cache: reused ? 'not_modified' : null });
    if (reused) expect(p.content_hash).toBe(first.pages.get(url)!.content_hash);
  }
  // The read model counts the recrawl's pages and items as the first run's.
  await cacheHolds(USER, second.jobId, PAGES);
  expect(await settledJob(second.jobId, expected.items)).toEqual(await settledJob(first.jobId, expected.items));

  // 3. Within max_age: not a single request, robots.txt included; the same pages and items.
  const fresh = await crawl(USER, { max_age: 3600 });
  expect(site.accessLog.entries()).toEqual([]);
  expect(counts(fresh.completed)).toEqual(counts(first.completed));
  expect(parseOf(fresh.pages)).toEqual(parseOf(first.pages));
  expect([...fresh.pages.values()].every((p) => p.from_cache === 'max_age')).toBe(true);

  // 4. ignore_cache: everything in full, no condition sent, whatever max_age says.
  const bypass = await crawl(USER, { max_age: 3600, ignore_cache: true });
  expect(served()).toHaveLength(PAGES);
  expect(served().filter((e) => conditional(e) || e.status !== 200)).toEqual([]);
  expect(counts(bypass.completed)).toEqual(counts(first.completed));
  expect([...bypass.pages.values()].every((p) => p.from_cache === null)).toBe(true);
  // …and another user's crawl never meets this user's cache; run once, it keeps nothing for its own.
  const other = await crawl(`${USER}-other`, { max_age: 3600 });
  expect(served()).toHaveLength(PAGES);
  expect(served().filter((e) => conditional(e) || e.status !== 200)).toEqual([]);
  expect(counts(other.completed)).toEqual(counts(first.completed));
  expect([...other.pages.values()].every((p) => p.content_hash === null)).toBe(true);

  // 5. Replay rebuilds the read models, the HTTP cache included, to the live checksums.
  await cacheHolds(USER, bypass.jobId, PAGES);
  await cacheHolds(`${USER}-other`, other.jobId, 0);
  const entries = async () => (await pipeline.db.pool.query('SELECT * FROM http_cache ORDER BY user_id, url')).rows;
  const before = await entries();
  const report = await trawlReplay(pipeline, 'pg');
  expect(report.verified).toBe('live');
  expect(report.checksum.cache).toMatchObject({ rows: PAGES });
  expect(await entries()).toEqual(before);
}, 600_000);
