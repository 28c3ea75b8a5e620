/**
 * The crawl end to end (issue 4; invariants 3, 4, 6): a frontier and two workers as separate
 * processes on the real stack crawl a generated site whose expected URL set is computed from its
 * definition, not from the crawler. Every trap of the site is linked from its home page. The same
 * crawl with a worker or the frontier SIGKILLed (invariant 1), with the read models and their
 * replays checked too, is in test/chaos/processes.test.ts (scenarios i and j).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { createTestSite, type TestSite } from '@trawl/demo-site';
import type { FetchRequested, JobCompleted, PageFailed, PageFetched } from '@trawl/schemas';
import { readEvents } from '@trawl/streams';
import { crawlSpec } from '@trawl/store';
import { Pipeline } from '../src/pipeline.ts';

// A page that times out is retried, and a retried normal page fails the access-log check below: the
// deadline must be far above any stall of a busy worker (an event loop held up on 2 cores), and the
// slow trap far above the deadline, so that only the trap ever times out.
const FETCH_TIMEOUT_MS = 5_000;
const RETRY_ENV = { TRAWL_FETCH_RETRY_DELAYS_MS: '300,600,900', TRAWL_FETCH_TIMEOUT_MS: String(FETCH_TIMEOUT_MS) };

let site: TestSite;
let pipeline: Pipeline | undefined;

beforeAll(async () => {
  site = await createTestSite({ pages: 60, linksPerPage: 3, itemsPerPage: 2, traps: true, slowMs: 4 * FETCH_TIMEOUT_MS });
});
afterAll(async () => {
  await site?.close();
});
afterEach(async () => {
  await pipeline?.stop();
  pipeline = undefined;
  site.reset();
});

async function dispatch(p: Pipeline, maxDepth: number): Promise<string> {
  const jobId = randomUUID();
  await p.producer.emit(
    'JobDispatched',
    {
      job_id: jobId,
      user_id: 'e2e',
      target_id: null,
      schedule_id: null,
      search_url: site.home,
      start_urls: [site.home],
      keywords: [],
      location: null,
      spec: { ...crawlSpec(null, { depth: maxDepth, max_pages: 10_000 }), ...site.spec },
      attempt: 1,
      params: {},
    },
    { topic: p.topics.jobs },
  );
  return jobId;
}

interface CrawlOutcome {
  requested: FetchRequested[];
  fetched: PageFetched[];
  failed: PageFailed[];
  completed: JobCompleted[];
}

async function outcome(p: Pipeline, jobId: string): Promise<CrawlOutcome> {
  const events = await readEvents(p.kafka, p.codec, [p.topics.jobs, p.topics.pages, p.topics.fetch]);
  const of = <T>(name: string) => events.filter((e) => e.event.name === name && (e.event.value as { job_id: string }).job_id === jobId).map((e) => e.event.value as T);
  return { requested: of('FetchRequested'), fetched: of('PageFetched'), failed: of('PageFailed'), completed: of('JobCompleted') };
}

const completedOnce = (p: Pipeline, jobId: string) =>
  p.waitFor((events) => events.some((e) => e.event.name === 'JobCompleted' && (e.event.value as JobCompleted).job_id === jobId), 120_000, `JobCompleted of ${jobId}`);

const uniqueIds = (xs: { event_id: string }[]) => new Set(xs.map((x) => x.event_id)).size;
const urls = (xs: { url: string }[]) => [...new Set(xs.map((x) => x.url))].sort();

function expectExactCrawl(o: CrawlOutcome, maxDepth: number): void {
  const expected = site.expected(maxDepth);
  // Invariant 4: every expected URL requested, nothing else, each once.
  expect(urls(o.requested)).toEqual([...expected.requested].sort());
  expect(new Set(o.requested.map((r) => r.fetch_id)).size).toBe(expected.requested.length);
  expect(urls(o.fetched)).toEqual([...expected.fetched].sort());
  expect(urls(o.failed)).toEqual([...expected.failed].sort());
  // Invariant 3: completed exactly once, with everything accounted for.
  expect(uniqueIds(o.completed)).toBe(1);
  const done = o.completed[0]!;
  expect(done.outcome).toBe('finished');
  expect(done.pages_fetched).toBe(expected.fetched.length);
  expect(done.pages_failed).toBe(expected.failed.length);
  expect(done.urls_seen).toBe(expected.requested.length);
}

describe('crawl pipeline', () => {
  it('crawls exactly the expected URL set, each page once, traps handled, and completes once', async () => {
    pipeline = await Pipeline.start({ env: RETRY_ENV });
    pipeline.spawn('frontier');
    pipeline.spawn('worker');
    pipeline.spawn('worker');
    await pipeline.groupSettled('trawl-worker', 2);
    const jobId = await dispatch(pipeline, 3);
    await completedOnce(pipeline, jobId);
    const o = await outcome(pipeline, jobId);
    expectExactCrawl(o, 3);
    expect(o.completed).toHaveLength(1);

    const expected = site.expected(3);
    const log = site.accessLog;
    for (const url of expected.neverServed) expect(log.count(new URL(url).pathname + new URL(url).search)).toBe(0);
    // Retries are the only repeats: the flaky page (fails twice), the 503 and the slow page.
    const repeats = [...log.duplicates().keys()].filter((p) => p !== '/robots.txt').sort();
    expect(repeats).toEqual(['/trap/always-503', '/trap/flaky', '/trap/slow'].sort());
    expect(log.count('/trap/flaky')).toBe(3);
    const flaky = o.fetched.find((f) => f.url.endsWith('/trap/flaky'))!;
    expect(flaky.attempt).toBe(3);
    const pdf = o.fetched.find((f) => f.url.endsWith('.pdf'));
    expect(pdf?.parsed).toBe(false);
  }, 180_000);
});
