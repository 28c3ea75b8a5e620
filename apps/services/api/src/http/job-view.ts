import type { JobRow } from '../data/jobs.ts';
import { isTerminal } from '../data/jobs.ts';

/**
 * The counters only `GET /jobs/:id/status` shows: kept on the job's row by projector-pg as it
 * projects the events (its model/job-counters.ts), so the view reads them with the row rather than
 * counting the job's log and pages on every request.
 */
export function statusCounters(job: Pick<JobRow, 'pages_blocked' | 'duplicates' | 'sessions_replaced'>) {
  return { pages_blocked: job.pages_blocked, duplicates: job.duplicates, sessions_replaced: job.sessions_replaced };
}

/** A job as the API shows it: counters and timings grouped, the owner left out (it is the caller). */
export function toJobView(job: JobRow, now: Date = new Date()) {
  const start = job.requested_at ?? job.dispatched_at;
  const end = job.finished_at ?? (isTerminal(job.status) ? null : now);
  return {
    job_id: job.job_id,
    status: job.status,
    schedule_id: job.schedule_id,
    target_id: job.target_id,
    website_id: job.website_id,
    spider: job.spider,
    start_urls: job.start_urls ?? [],
    search_url: job.search_url,
    depth: job.depth,
    max_pages: job.max_pages,
    params: job.params ?? {},
    started_at: job.dispatched_at ?? job.first_page_at,
    counters: {
      pages_fetched: job.pages_fetched,
      pages_failed: job.pages_failed,
      items_extracted: job.items_extracted,
      items_invalid: job.items_invalid,
      bytes: job.bytes,
      urls_seen: job.urls_seen,
    },
    timings: {
      requested_at: job.requested_at,
      dispatched_at: job.dispatched_at,
      first_page_at: job.first_page_at,
      finished_at: job.finished_at,
      duration_ms: start && end ? Math.max(0, end.getTime() - start.getTime()) : null,
    },
    error: job.error_code || job.error ? { code: job.error_code, message: job.error } : null,
    retry_of: job.retry_of,
    reextract_of: job.reextract_of,
    log_seq: job.log_seq,
  };
}
