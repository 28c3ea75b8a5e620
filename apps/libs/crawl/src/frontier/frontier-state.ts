import type { CrawlSpec } from '@trawl/schemas';

export type FrontierStatus = 'new' | 'running' | 'completed' | 'failed' | 'cancelled';

export interface OutstandingFetch {
  readonly url: string;
  readonly depth: number;
}

/** A fetch decided while its job was paused: requested (with this referrer) when the job resumes. */
export interface QueuedFetch extends OutstandingFetch {
  readonly referrer: string | null;
}

/** The error code of the PageFailed the frontier gives a fetch that no outcome came for by the deadline. */
export const FETCH_LOST = 'FETCH_LOST';

/**
 * The frontier's state of one job. Plain JSON (no Date, Set or Map) because it is stored as is
 * (Postgres jsonb) and read back after a restart; times are epoch milliseconds.
 */
export interface FrontierState {
  readonly job_id: string;
  /** The job's user (JobDispatched): whose HTTP cache its requests are looked up in. Null: none is. */
  readonly user_id: string | null;
  readonly status: FrontierStatus;
  readonly spec: CrawlSpec | null;
  /** The request's params: filled into the start URLs here and carried to the workers with each fetch. */
  readonly params: Readonly<Record<string, string>>;
  /** Every normalised URL requested for this job: the per-job dedupe set (invariant 4). */
  readonly seen: Readonly<Record<string, true>>;
  /** fetch_id → what was requested and has no PageFetched/PageFailed yet. Empty ⇔ nothing in flight. */
  readonly outstanding: Readonly<Record<string, OutstandingFetch>>;
  /**
   * Paused (JobPaused until JobResumed): no new FetchRequested. What the job would request is
   * decided as ever — seen, counted in urls_seen, so max_pages and the completion rule hold — and
   * held here (fetch_id → fetch) until it resumes.
   */
  readonly paused: boolean;
  readonly queued: Readonly<Record<string, QueuedFetch>>;
  readonly counters: FrontierCounters;
  readonly started_at: number | null;
  /** event_id of the JobDispatched that started the job. */
  readonly dispatch_event_id: string | null;
  /**
   * When the job last moved (epoch ms of the deciding edge's clock): its start, or an outcome it was
   * waiting for. The fetch deadline counts from here, not from each request, so fetches that wait in
   * a long politeness queue are not lost while their job still makes progress.
   */
  readonly active_at: number | null;
}

export interface FrontierCounters {
  readonly pages_fetched: number;
  readonly pages_failed: number;
  readonly items_extracted: number;
  /** URLs requested (seen set size); max_pages counts these. */
  readonly urls_seen: number;
  /**
   * Of urls_seen, those taken from the job's sitemaps (TRAWL_SITEMAP_MAX_URLS bounds them). Stored
   * with the counters, so it survives a restart; absent (states from before sitemaps): 0.
   */
  readonly sitemap_urls?: number;
  /**
   * Pages fetched as duplicates (PageFetched.canonical_url): their items are their canonical page's,
   * which was requested in their stead unless already seen. Absent (states from before): 0.
   */
  readonly duplicates?: number;
}

export function initialFrontierState(jobId: string): FrontierState {
  return {
    job_id: jobId,
    user_id: null,
    status: 'new',
    spec: null,
    params: {},
    seen: {},
    outstanding: {},
    paused: false,
    queued: {},
    counters: { pages_fetched: 0, pages_failed: 0, items_extracted: 0, urls_seen: 0 },
    started_at: null,
    dispatch_event_id: null,
    active_at: null,
  };
}

export function isTerminal(state: FrontierState): boolean {
  return state.status === 'completed' || state.status === 'failed' || state.status === 'cancelled';
}
