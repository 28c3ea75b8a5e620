/**
 * The projection's version. Bump it whenever the read-model tables or the way events map to rows
 * change: the new code refuses to write the old tables, and `trawl replay pg` builds the new
 * version's tables from the log and swaps them in (see README, "Rolling out a new version").
 *
 * 2 — items have no job log line (the page's line counts them); 1 — a line per event.
 */
export const PROJECTION = 'pg';
export const PROJECTION_VERSION = 2;

/** The name under which a version's offsets are stored in `stream_offsets`. */
export function projectionName(version: number = PROJECTION_VERSION): string {
  return `${PROJECTION}-v${version}`;
}

/** The topics the projection reads, in the order their events are best applied within a batch. */
export const PROJECTED_TOPIC_KEYS = ['jobs', 'pages', 'items'] as const;
