import type { CrawlSpec } from '@trawl/schemas';

export type FrontierStatus = 'new' | 'running' | 'completed' | 'failed' | 'cancelled';

export interface OutstandingFetch {
  readonly url: string;
  readonly depth: number;
}

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
  };
}

export function isTerminal(state: FrontierState): boolean {
  return state.status === 'completed' || state.status === 'failed' || state.status === 'cancelled';
}
