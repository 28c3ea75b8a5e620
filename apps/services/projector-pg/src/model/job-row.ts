/**
 * A job's row and how each job event folds into it.
 *
 * Every fold is commutative and idempotent (min/max, fixed precedence), because the three topics
 * a job lives on are read in no fixed interleaving: the live projector and a replay see a job's
 * events in different orders, and both must end on the same row (replay verifies it by checksum).
 * That is why the row keeps the facts (completed_at, failed_at, cancelled_at, outcome) and the
 * status is derived from them rather than stepped by arrival.
 */
import type { CrawlRequested, CrawlSpec, JobCancelled, JobCompleted, JobDispatched, JobFailed, JobPaused, JobResumed } from '@trawl/schemas';

export type JobStatus = 'pending' | 'running' | 'paused' | 'finished' | 'failed' | 'cancelled';

export interface JobRow {
  job_id: string;
  user_id: string | null;
  schedule_id: string | null;
  target_id: string | null;
  website_id: string | null;
  status: JobStatus;
  spider: string | null;
  start_urls: readonly string[];
  search_url: string | null;
  params: Readonly<Record<string, string>>;
  spec: CrawlSpec | null;
  max_depth: number | null;
  max_pages: number | null;
  dedupe_key: string | null;
  attempt: number;
  requested_at: Date | null;
  dispatched_at: Date | null;
  first_page_at: Date | null;
  finished_at: Date | null;
  completed_at: Date | null;
  outcome: 'finished' | 'cancelled' | null;
  failed_at: Date | null;
  cancelled_at: Date | null;
  cancel_reason: string | null;
  /** The latest JobPaused and JobResumed: paused while the pause is the later of the two. */
  paused_at: Date | null;
  resumed_at: Date | null;
  /** The job whose failed pages this one fetches again. */
  retry_of: string | null;
  pages_fetched: number;
  pages_failed: number;
  items_extracted: number;
  bytes: number;
  /** Distinct fetches seen so far; JobCompleted's figure (the frontier's) once the job is over. */
  urls_seen: number;
  /** JobCompleted's urls_seen, kept apart so the live count can be recomputed around it. */
  completed_urls_seen: number | null;
  /** Fetches that ended blocked, duplicates by rel=canonical, sessions replaced after a block (job-counters.ts). */
  pages_blocked: number;
  duplicates: number;
  sessions_replaced: number;
  /** Items kept with errors: a field transform or the website's item schema refused them (ItemExtracted.errors). */
  items_invalid: number;
  error_code: string | null;
  error: string | null;
  /** The event id whose error is shown (the earliest JobFailed), for a deterministic pick. */
  error_event_id: string | null;
  log_seq: number;
  updated_at: Date;
}

const EPOCH = new Date(0);

export function emptyJob(job_id: string): JobRow {
  return {
    job_id,
    user_id: null,
    schedule_id: null,
    target_id: null,
    website_id: null,
    status: 'pending',
    spider: null,
    start_urls: [],
    search_url: null,
    params: {},
    spec: null,
    max_depth: null,
    max_pages: null,
    dedupe_key: null,
    attempt: 0,
    requested_at: null,
    dispatched_at: null,
    first_page_at: null,
    finished_at: null,
    completed_at: null,
    outcome: null,
    failed_at: null,
    cancelled_at: null,
    cancel_reason: null,
    paused_at: null,
    resumed_at: null,
    retry_of: null,
    pages_fetched: 0,
    pages_failed: 0,
    items_extracted: 0,
    bytes: 0,
    urls_seen: 0,
    completed_urls_seen: null,
    pages_blocked: 0,
    duplicates: 0,
    sessions_replaced: 0,
    items_invalid: 0,
    error_code: null,
    error: null,
    error_event_id: null,
    log_seq: 0,
    updated_at: EPOCH,
  };
}

export function minDate(a: Date | null, b: Date | null): Date | null {
  if (!a) return b;
  if (!b) return a;
  return a.getTime() <= b.getTime() ? a : b;
}

export function maxDate(a: Date | null, b: Date | null): Date | null {
  if (!a) return b;
  if (!b) return a;
  return a.getTime() >= b.getTime() ? a : b;
}

/** (time, event id) ordering: the deterministic tie-break for "which event wins". */
export function laterThan(aAt: Date, aId: string, bAt: Date, bId: string): boolean {
  const d = aAt.getTime() - bAt.getTime();
  return d !== 0 ? d > 0 : aId > bId;
}

/**
 * Status from the facts, whatever order they arrived in: a failure beats a completion, a
 * completion's outcome beats a cancel request (the frontier may have finished first), a cancel
 * request shows at once, a pause shows until a later resume, pages imply the job runs even before
 * its JobDispatched is read. A pause and a resume of the same millisecond read as resumed.
 */
export function deriveStatus(job: JobRow): JobStatus {
  if (job.failed_at) return 'failed';
  if (job.outcome) return job.outcome;
  if (job.cancelled_at) return 'cancelled';
  if (job.paused_at && (!job.resumed_at || job.paused_at.getTime() > job.resumed_at.getTime())) return 'paused';
  if (job.dispatched_at || job.first_page_at) return 'running';
  return 'pending';
}

export function deriveFinishedAt(job: JobRow): Date | null {
  if (job.failed_at) return job.failed_at;
  if (job.completed_at) return job.completed_at;
  if (job.cancelled_at) return job.cancelled_at;
  return null;
}

/** Recomputes what is derived from the facts; call after every fold. */
export function settle(job: JobRow): JobRow {
  job.status = deriveStatus(job);
  job.finished_at = deriveFinishedAt(job);
  job.urls_seen = job.completed_urls_seen ?? job.pages_fetched + job.pages_failed;
  return job;
}

export function foldCrawlRequested(job: JobRow, e: CrawlRequested): void {
  // The requester is the owner; JobDispatched's user only stands in until the request is read.
  job.user_id = e.user_id;
  job.spider ??= e.spider;
  // JobDispatched's start URLs are the ones crawled; the request's only stand in until it is read.
  if (!job.dispatched_at) job.start_urls = [...e.start_urls];
  if (Object.keys(job.params).length === 0) job.params = { ...e.params };
  job.max_depth ??= e.depth;
  job.max_pages ??= e.max_pages;
  job.dedupe_key ??= e.dedupe_key;
  job.retry_of ??= e.retry_of ?? null;
  job.requested_at = minDate(job.requested_at, e.occurred_at);
}

export function foldJobDispatched(job: JobRow, e: JobDispatched): void {
  // Several dispatches of one job are attempts; the latest attempt describes what runs.
  const latest = e.attempt >= job.attempt;
  if (latest) {
    job.attempt = e.attempt;
    job.search_url = e.search_url;
    job.start_urls = [...e.start_urls];
    job.spec = e.spec;
    job.website_id = e.spec.website_id;
    job.target_id = e.target_id ?? job.target_id;
    job.schedule_id = e.schedule_id ?? job.schedule_id;
    job.max_depth = e.spec.max_depth;
    job.max_pages = e.spec.max_pages;
    // Both events carry the request's params; a scheduled job has only this one.
    if (Object.keys(job.params).length === 0 && e.params) job.params = { ...e.params };
  }
  job.user_id ??= e.user_id;
  job.dispatched_at = minDate(job.dispatched_at, e.occurred_at);
  // A scheduled job has no CrawlRequested: it was requested when it was dispatched.
  job.requested_at = minDate(job.requested_at, e.occurred_at);
}

export function foldJobCompleted(job: JobRow, e: JobCompleted): void {
  // Exactly one JobCompleted is the frontier's promise; should two arrive, the first one counts.
  if (job.completed_at && !laterThan(job.completed_at, '', e.occurred_at, '')) return;
  job.completed_at = e.occurred_at;
  job.outcome = e.outcome;
  job.completed_urls_seen = e.urls_seen;
}

export function foldJobFailed(job: JobRow, e: JobFailed): void {
  if (job.failed_at && job.error_event_id && !laterThan(job.failed_at, job.error_event_id, e.occurred_at, e.event_id)) return;
  job.failed_at = e.occurred_at;
  job.error_code = e.error_code;
  job.error = e.reason;
  job.error_event_id = e.event_id;
}

export function foldJobCancelled(job: JobRow, e: JobCancelled): void {
  if (job.cancelled_at && !laterThan(job.cancelled_at, '', e.occurred_at, '')) return;
  job.cancelled_at = e.occurred_at;
  job.cancel_reason = e.reason;
}

export function foldJobPaused(job: JobRow, e: JobPaused): void {
  job.paused_at = maxDate(job.paused_at, e.occurred_at);
}

export function foldJobResumed(job: JobRow, e: JobResumed): void {
  job.resumed_at = maxDate(job.resumed_at, e.occurred_at);
}

/** The events a job row is folded from, and how: one list for the live planner and the replay's bulk build. */
const JOB_ROW_FOLDS = {
  CrawlRequested: foldCrawlRequested,
  JobDispatched: foldJobDispatched,
  JobCompleted: foldJobCompleted,
  JobFailed: foldJobFailed,
  JobCancelled: foldJobCancelled,
  JobPaused: foldJobPaused,
  JobResumed: foldJobResumed,
} as const;

export type JobRowEvent = keyof typeof JOB_ROW_FOLDS;

export const JOB_ROW_EVENTS: ReadonlySet<string> = new Set(Object.keys(JOB_ROW_FOLDS));

/** Folds one of the job's own events (JOB_ROW_EVENTS) into its row. */
export function foldJobEvent(job: JobRow, name: JobRowEvent, value: unknown): void {
  (JOB_ROW_FOLDS[name] as (job: JobRow, e: unknown) => void)(job, value);
}
