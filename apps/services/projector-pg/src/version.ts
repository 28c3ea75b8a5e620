/**
 * The projection's version. Bump it whenever the read-model tables or the way events map to rows
 * change: the new code refuses to write the old tables, and `trawl replay pg` builds the new
 * version's tables from the log and swaps them in (see README, "Rolling out a new version").
 *
 * 4 — the HTTP cache: `http_cache` (per user and URL, the latest cacheable page), and each page's
 *     validators and reuse mark (`etag`, `last_modified`, `from_cache`);
 * 3 — jobs can be paused (status `paused`, paused_at, resumed_at) and retried (retry_of), with
 *     a log line per pause and resume; pages carry their content hash and stored formats;
 * 2 — items have no job log line (the page's line counts them); 1 — a line per event.
 */
import { versionedProjectionName } from '@trawl/streams';

export const PROJECTION = 'pg';
export const PROJECTION_VERSION = 4;

/** The name under which a version's offsets are stored in `stream_offsets`. */
export function projectionName(version: number = PROJECTION_VERSION): string {
  return versionedProjectionName(PROJECTION, version);
}

/** The topics the projection reads, in the order their events are best applied within a batch. */
export const PROJECTED_TOPIC_KEYS = ['jobs', 'pages', 'items'] as const;
