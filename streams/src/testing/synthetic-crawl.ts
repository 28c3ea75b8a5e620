/**
 * A realistic, deterministic stream of crawl events for a few jobs: requests, dispatches, pages
 * (some failing, some redirected, some fetched twice by a worker that crashed after producing),
 * items, and an end (finished, failed or cancelled). Seeded, so a test can compute expectations.
 */
import type { EventMap, EventName } from '@trawl/schemas';
import { sampleSpec } from '@trawl/schemas';
import { eventId, stableId } from '@trawl/base';
import type { EventBody } from '../producer/event-producer.ts';

export interface SyntheticEvent<N extends EventName = EventName> {
  readonly name: N;
  readonly body: EventBody<N>;
  readonly eventId: string;
  readonly occurredAt: Date;
}

export interface SyntheticCrawlOptions {
  readonly jobs: number;
  readonly pagesPerJob: number;
  readonly itemsPerPage?: number;
  readonly seed?: number;
  /** Distinguishes runs that share topics (the bench appends to its topics). */
  readonly runId?: string;
  readonly start?: Date;
  /** Hosts to spread pages over. */
  readonly hosts?: readonly string[];
}

/** mulberry32: small, fast, good enough for test data. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ev = <N extends EventName>(name: N, body: EventBody<N>, id: string, at: Date): SyntheticEvent => ({ name, body, eventId: id, occurredAt: at }) as SyntheticEvent;

/** Events of one job in causal order; `t` advances through the crawl. */
export function syntheticJob(jobIndex: number, o: SyntheticCrawlOptions): SyntheticEvent[] {
  const rnd = prng((o.seed ?? 1) * 7919 + jobIndex);
  const run = o.runId ?? 'run';
  const hosts = o.hosts ?? ['shop.example', 'news.example', 'jobs.example', 'blog.example'];
  const host = hosts[jobIndex % hosts.length]!;
  const job_id = stableId('synthetic-job', run, jobIndex);
  const user = `user-${jobIndex % 3}`;
  let t = (o.start ?? new Date('2026-01-05T10:00:00Z')).getTime() + jobIndex * 1_000;
  const at = (stepMs: number) => new Date((t += stepMs));
  const out: SyntheticEvent[] = [];
  const startUrl = `https://${host}/start/${jobIndex}`;
  const scheduled = jobIndex % 4 === 3;
  if (!scheduled) {
    out.push(ev('CrawlRequested', {
      job_id, user_id: user, spider: null, start_urls: [startUrl], depth: 2, max_pages: o.pagesPerJob,
      params: { q: `query ${jobIndex}` }, dedupe_key: `dk-${run}-${jobIndex}`, ignore_cache: false, retry_of: null, sitemap: 'include',
    }, eventId('CrawlRequested', job_id), at(0)));
  }
  out.push(ev('JobDispatched', {
    job_id, user_id: scheduled ? null : user, target_id: scheduled ? `target-${jobIndex}` : null, schedule_id: scheduled ? `schedule-${jobIndex}` : null,
    search_url: startUrl, start_urls: [startUrl], keywords: ['rust'], location: null,
    spec: { ...sampleSpec, website_id: `site-${host}`, website_name: host, max_pages: o.pagesPerJob }, attempt: 1,
    params: scheduled ? {} : { q: `query ${jobIndex}` },
  }, eventId('JobDispatched', job_id, 1), at(5)));

  let fetched = 0;
  let failed = 0;
  let items = 0;
  const itemsPerPage = o.itemsPerPage ?? 3;
  for (let p = 0; p < o.pagesPerJob; p++) {
    const fetch_id = stableId('fetch', job_id, p);
    const url = `https://${host}/page/${jobIndex}/${p}?ref=${p % 5}`;
    const roll = rnd();
    if (roll < 0.06) {
      failed++;
      out.push(ev('PageFailed', {
        job_id, fetch_id, url, depth: p === 0 ? 0 : 1 + (p % 2), status: roll < 0.03 ? 503 : null,
        error_code: roll < 0.03 ? 'HTTP_5XX' : p % 3 === 0 ? 'TRAWL_BLOCKED' : 'TIMEOUT', error_message: roll < 0.03 ? 'Service "Unavailable"\tretry later' : p % 3 === 0 ? 'blocked: a captcha page' : 'timed out after 10 s',
        attempts: 4, render_mode: 'http',
      }, eventId('PageFailed', fetch_id), at(20 + Math.floor(rnd() * 40))));
      continue;
    }
    fetched++;
    const status = roll < 0.1 ? 404 : 200;
    const count = status === 200 ? itemsPerPage : 0;
    const page: EventBody<'PageFetched'> = {
      job_id, fetch_id, url, final_url: roll > 0.95 ? `${url}&redirected=1` : url, status, content_type: 'text/html; charset=utf-8',
      bytes: 1000 + Math.floor(rnd() * 90_000), fetch_ms: 5 + Math.floor(rnd() * 900), render_mode: roll > 0.9 ? 'browser' : 'http',
      depth: p === 0 ? 0 : 1 + (p % 2), links: [`https://${host}/page/${jobIndex}/${p + 1}`], next_page: null, item_count: count, links_dropped: 0,
      truncated: false, parsed: true, attempt: roll > 0.85 ? 2 : 1, content_hash: null, formats: [], etag: null, last_modified: null, from_cache: null, sitemap_urls: [], sitemap_urls_dropped: 0, content_refused: null, canonical_url: p % 11 === 7 ? `https://${host}/page/${jobIndex}/0` : null, notes: p % 13 === 9 ? ['session retired and replaced: session 1 met a block (TRAWL_BLOCKED)'] : [], throttle: null, simhash: null, near_duplicate_of: null, downloads: [],
    };
    const pageAt = at(20 + Math.floor(rnd() * 40));
    out.push(ev('PageFetched', page, eventId('PageFetched', fetch_id), pageAt));
    for (let i = 0; i < count; i++) {
      items++;
      const item_key = stableId('item', fetch_id, i);
      out.push(ev('ItemExtracted', {
        job_id, fetch_id, item_key, url,
        fields: { title: `Item ${jobIndex}-${p}-${i} "quoted" \\ back\nslash`, price: `${(rnd() * 100).toFixed(2)} EUR`, note: 'ünïcødé ✓' },
        // Some items fail their website's item schema: kept with their errors (projector-pg counts them).
        truncated_fields: [], errors: (p + i) % 5 === 3 ? ['/price must be number'] : [],
      }, eventId('ItemExtracted', item_key), at(1)));
    }
    // A worker that crashed after producing fetches again: same fetch, new event id, later.
    if (rnd() < 0.03) out.push(ev('PageFetched', { ...page, fetch_ms: page.fetch_ms + 1 }, stableId('PageFetched-refetch', fetch_id), at(30)));
  }
  const end = jobIndex % 7;
  if (end === 5) {
    out.push(ev('JobFailed', { job_id, error_code: 'ROBOTS_DISALLOWED', reason: 'every start URL is disallowed by robots.txt', pages_fetched: fetched, pages_failed: failed }, eventId('JobFailed', job_id), at(10)));
  } else if (end === 6) {
    out.push(ev('JobCancelled', { job_id, user_id: user, reason: 'changed my mind' }, eventId('JobCancelled', job_id), at(10)));
    out.push(ev('JobCompleted', {
      job_id, outcome: 'cancelled', pages_fetched: fetched, pages_failed: failed, items_extracted: items, urls_seen: fetched + failed + 2, started_at: new Date(t - 1000),
    }, eventId('JobCompleted', job_id), at(10)));
  } else if (end !== 4) {
    // end === 4: the job is still running when the stream stops.
    out.push(ev('JobCompleted', {
      job_id, outcome: 'finished', pages_fetched: fetched, pages_failed: failed, items_extracted: items, urls_seen: fetched + failed + 1, started_at: new Date(t - 5000),
    }, eventId('JobCompleted', job_id), at(10)));
  }
  return out;
}

export function syntheticCrawl(o: SyntheticCrawlOptions): SyntheticEvent[] {
  const out: SyntheticEvent[] = [];
  for (let j = 0; j < o.jobs; j++) out.push(...syntheticJob(j, o));
  return out;
}

/** The event as a consumer decodes it (envelope filled), for pure tests. */
export function decoded(e: SyntheticEvent): { name: EventName; value: EventMap[EventName] } {
  return { name: e.name, value: { event_id: e.eventId, occurred_at: e.occurredAt, causation_id: null, ...e.body } as unknown as EventMap[EventName] };
}
