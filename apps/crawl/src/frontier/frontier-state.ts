import type { CrawlSpec } from '@trawl/schemas';

export type FrontierStatus = 'new' | 'running' | 'completed' | 'failed' | 'cancelled';

export interface OutstandingFetch {
  readonly url: string;
  readonly depth: number;
}

/** The error code of the PageFailed the frontier gives a fetch that no outcome came for by the deadline. */
export const FETCH_LOST = 'FETCH_LOST';

/**
 * The frontier's state of one job. Plain JSON (no Date, Set or Map) because it is stored as is
 * (Postgres jsonb) and read back after a restart; times are epoch milliseconds.
 */
export interface FrontierState {
  readonly job_id: string;
  readonly status: FrontierStatus;
  readonly spec: CrawlSpec | null;
  /** Every normalised URL requested for this job: the per-job dedupe set (invariant 4). */
  readonly seen: Readonly<Record<string, true>>;
  /** fetch_id → what was requested and has no PageFetched/PageFailed yet. Empty ⇔ nothing in flight. */
  readonly outstanding: Readonly<Record<string, OutstandingFetch>>;
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
}

export function initialFrontierState(jobId: string): FrontierState {
  return {
    job_id: jobId,
    status: 'new',
    spec: null,
    seen: {},
    outstanding: {},
    counters: { pages_fetched: 0, pages_failed: 0, items_extracted: 0, urls_seen: 0 },
    started_at: null,
    dispatch_event_id: null,
    active_at: null,
  };
}

export function isTerminal(state: FrontierState): boolean {
  return state.status === 'completed' || state.status === 'failed' || state.status === 'cancelled';
}
