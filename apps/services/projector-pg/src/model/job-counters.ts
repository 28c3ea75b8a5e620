/**
 * The job counters the status view shows beyond pages, items and bytes (`GET /jobs/:id/status`
 * `counters`): kept on the job's row as the events are projected, so the view reads one row
 * instead of scanning the job's log and pages on every request.
 *
 * Each rule is written twice, side by side: in TypeScript for the incremental planner
 * (plan-batch.ts) and in SQL for the replay's bulk settle (bulk-build.ts), over the very rows
 * both build — page rows (the fetch's winner, page-row.ts) and job log lines (log-line.ts) — so a
 * replay ends on the same counters as the live projector (replay-equivalence.test.ts).
 *
 * - `pages_blocked`: fetches whose standing row failed blocked — a block page on every attempt
 *   (TRAWL_BLOCKED), or a login wall met by a job that declares no login (TRAWL_LOGIN_REQUIRED).
 * - `duplicates`: PageFetched lines naming a canonical URL (rel=canonical: the page's items are
 *   its canonical page's), one per line of the job's log.
 * - `sessions_replaced`: the worker's notes on PageFetched lines saying a session was retired after
 *   a block and replaced (the worker's session-events.ts writes them with this prefix).
 *
 * What a fetch's standing row adds to the job's pages, failures and bytes besides `pages_blocked`
 * (contribution) is counted here too, so the planner takes every job counter from this module.
 */
import type { PageRow } from './page-row.ts';
import type { LoggedEventName } from './log-line.ts';

/** Error codes of a page that ended blocked. */
export const BLOCKED_CODES: readonly string[] = ['TRAWL_BLOCKED', 'TRAWL_LOGIN_REQUIRED'];

/** How the worker's note on a session's replacement starts (worker session-events.ts SESSION_REPLACED_NOTE). */
export const SESSION_REPLACED_PREFIX = 'session retired and replaced:';

export function isBlockedPage(row: Pick<PageRow, 'ok' | 'error_code'>): boolean {
  return !row.ok && row.error_code !== null && BLOCKED_CODES.includes(row.error_code);
}

/** What a fetch adds to its job's counters. */
export interface PageContribution {
  readonly fetched: number;
  readonly failed: number;
  readonly bytes: number;
  readonly blocked: number;
}

export function contribution(row: PageRow | undefined): PageContribution {
  if (!row) return { fetched: 0, failed: 0, bytes: 0, blocked: 0 };
  return row.ok ? { fetched: 1, failed: 0, bytes: row.bytes, blocked: 0 } : { fetched: 0, failed: 1, bytes: 0, blocked: isBlockedPage(row) ? 1 : 0 };
}

/** What one job log line adds to the job's `duplicates` and `sessions_replaced`. */
export function logLineCounters(event: LoggedEventName, data: Readonly<Record<string, unknown>>): { duplicates: number; sessions_replaced: number } {
  if (event !== 'PageFetched') return { duplicates: 0, sessions_replaced: 0 };
  const notes = Array.isArray(data.notes) ? data.notes : [];
  return {
    duplicates: typeof data.canonical_url === 'string' ? 1 : 0,
    sessions_replaced: notes.filter((n): n is string => typeof n === 'string' && n.startsWith(SESSION_REPLACED_PREFIX)).length,
  };
}

const quoted = (s: string): string => `'${s.replaceAll("'", "''")}'`;

/** isBlockedPage over a page table's columns. */
export const BLOCKED_PAGE_SQL = `(NOT ok AND error_code IN (${BLOCKED_CODES.map(quoted).join(', ')}))`;

/** logLineCounters summed over a job log table's lines (in a GROUP BY job_id). */
export const LOG_COUNTERS_SQL = {
  duplicates: `count(*) FILTER (WHERE event = 'PageFetched' AND jsonb_typeof(data->'canonical_url') = 'string')`,
  sessions_replaced: `coalesce(sum((SELECT count(*) FROM jsonb_array_elements(CASE WHEN jsonb_typeof(data->'notes') = 'array' THEN data->'notes' ELSE '[]'::jsonb END) AS note
      WHERE jsonb_typeof(note) = 'string' AND starts_with(note #>> '{}', ${quoted(SESSION_REPLACED_PREFIX)}))) FILTER (WHERE event = 'PageFetched'), 0)`,
} as const;
