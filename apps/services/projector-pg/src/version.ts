/**
 * The projection's version. Bump it whenever the read-model tables or the way events map to rows
 * change: the new code refuses to write the old tables, and `trawl replay pg` builds the new
 * version's tables from the log and swaps them in (see README, "Rolling out a new version").
 *
 * 5 — the job counters the status view shows (`pages_blocked`, `duplicates`, `sessions_replaced`)
 *     are columns of `jobs`, kept as events are projected (model/job-counters.ts), no longer
 *     counted from `job_log` and `job_pages` on every request; pages list the linked files kept for
 *     them (`job_pages.downloads`); a partial index of `job_log` finds the adaptive throttle's
 *     settings a job's view shows (PageFetched lines with `throttle`); items keep their errors
 *     (`job_items.errors`: a field transform or the item schema refused them) and jobs count them
 *     (`items_invalid`);
 * 4 — the HTTP cache: `http_cache` (per user and URL, the latest cacheable page), and each page's
 *     validators and reuse mark (`etag`, `last_modified`, `from_cache`);
 * 3 — jobs can be paused (status `paused`, paused_at, resumed_at) and retried (retry_of), with
 *     a log line per pause and resume; pages carry their content hash and stored formats;
 * 2 — items have no job log line (the page's line counts them); 1 — a line per event.
 */
import { versionedProjectionName } from '@trawl/streams';

export const PROJECTION = 'pg';
export const PROJECTION_VERSION = 5;

/** The name under which a version's offsets are stored in `stream_offsets`. */
export function projectionName(version: number = PROJECTION_VERSION): string {
  return versionedProjectionName(PROJECTION, version);
}

/** The topics the projection reads, in the order their events are best applied within a batch. */
export const PROJECTED_TOPIC_KEYS = ['jobs', 'pages', 'items'] as const;
