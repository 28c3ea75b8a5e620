import type { CrawlSpec, JobCancelled, JobDispatched, JobPaused, JobResumed, PageFailed, PageFetched } from '@trawl/schemas';
import { testSpec } from '../rules/test-spec.ts';
import { fetchId, normaliseUrl } from '../url/normalise.ts';
import type { FrontierEvent } from './decide.ts';

/** Event builders for frontier tests: only what a test is about is spelled out. */
export const JOB = '6f1c2a4e-93b7-5d0a-8c1e-2b7f4d9a0e11';
const at = new Date('2026-11-21T10:00:00.000Z');
let n = 0;
const envelope = () => ({ event_id: `00000000-0000-4000-8000-${String(++n).padStart(12, '0')}`, occurred_at: at, causation_id: null });

export function dispatched(startUrls: string[], spec: Partial<CrawlSpec> = {}, params: Record<string, string> = {}): FrontierEvent {
  const data: JobDispatched = {
    ...envelope(),
    job_id: JOB,
    user_id: null,
    target_id: null,
    schedule_id: null,
    search_url: startUrls[0] ?? '',
    start_urls: startUrls,
    keywords: [],
    location: null,
    spec: testSpec(spec),
    attempt: 1,
    params,
  };
  return { type: 'JobDispatched', data };
}

export function fetched(url: string, depth: number, links: string[] = [], extra: Partial<PageFetched> = {}): FrontierEvent {
  const u = normaliseUrl(url);
  const data: PageFetched = {
    ...envelope(),
    job_id: JOB,
    fetch_id: fetchId(JOB, u),
    url: u,
    final_url: u,
    status: 200,
    content_type: 'text/html',
    bytes: 100,
    fetch_ms: 5,
    render_mode: 'http',
    depth,
    links,
    next_page: null,
    item_count: 0,
    links_dropped: 0,
    truncated: false,
    parsed: true,
    attempt: 1,
    content_hash: null,
    formats: [],
    etag: null,
    last_modified: null,
    from_cache: null,
    sitemap_urls: [],
    sitemap_urls_dropped: 0,
    content_refused: null,
    canonical_url: null,
    notes: [],
    throttle: null, simhash: null, near_duplicate_of: null,
    downloads: [],
    ...extra,
  };
  return { type: 'PageFetched', data };
}

export function failed(url: string, depth: number): FrontierEvent {
  const u = normaliseUrl(url);
  const data: PageFailed = {
    ...envelope(),
    job_id: JOB,
    fetch_id: fetchId(JOB, u),
    url: u,
    depth,
    status: 503,
    error_code: 'TRAWL_HTTP_STATUS',
    error_message: 'HTTP 503',
    attempts: 4,
    render_mode: 'http',
  };
  return { type: 'PageFailed', data };
}

/** The edge's clock: `at` epoch ms, with the given deadline. */
export function tick(at: number, deadlineMs: number): FrontierEvent {
  return { type: 'Tick', at, deadlineMs };
}

export function cancelled(): FrontierEvent {
  const data: JobCancelled = { ...envelope(), job_id: JOB, user_id: null, reason: 'test' };
  return { type: 'JobCancelled', data };
}

export function paused(): FrontierEvent {
  const data: JobPaused = { ...envelope(), job_id: JOB, user_id: null, reason: null };
  return { type: 'JobPaused', data };
}

/** A resume at `occurredAt` (default: the fixed test time). */
export function resumed(occurredAt: Date = at): FrontierEvent {
  const data: JobResumed = { ...envelope(), occurred_at: occurredAt, job_id: JOB, user_id: null };
  return { type: 'JobResumed', data };
}
