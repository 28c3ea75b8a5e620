/**
 * Reads of the jobs read model (apps/services/projector-pg/READ-MODEL.md), always scoped to one user: a job
 * of somebody else is indistinguishable from a job that does not exist.
 *
 * A job the API accepted a moment ago may not be projected yet; `api_jobs` (written in the same
 * transaction as the dedupe key) fills that gap, so `POST /crawl` → `GET /jobs/:id/status` never
 * answers 404 for the caller's own fresh job. Queries never join the read model with API tables:
 * their id column types are not ours to assume.
 */
import type { Pool, PoolClient } from '@trawl/store';
import { sortAt } from '../http/cursor.ts';

type Db = Pool | PoolClient;

export const JOB_STATUSES = ['pending', 'running', 'paused', 'finished', 'failed', 'cancelled'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];
export const TERMINAL_STATUSES: readonly JobStatus[] = ['finished', 'failed', 'cancelled'];

export function isTerminal(status: string): boolean {
  return (TERMINAL_STATUSES as readonly string[]).includes(status);
}

export interface JobRow {
  readonly job_id: string;
  readonly user_id: string;
  readonly schedule_id: string | null;
  readonly target_id: string | null;
  readonly website_id: string | null;
  readonly status: JobStatus;
  readonly start_urls: readonly string[] | null;
  readonly search_url: string | null;
  readonly spider: string | null;
  readonly depth: number | null;
  readonly max_pages: number | null;
  readonly params: Readonly<Record<string, string>> | null;
  readonly requested_at: Date | null;
  readonly dispatched_at: Date | null;
  readonly first_page_at: Date | null;
  readonly finished_at: Date | null;
  readonly pages_fetched: number;
  readonly pages_failed: number;
  readonly items_extracted: number;
  /** Items kept with errors (ItemExtracted.errors), counted by projector-pg. */
  readonly items_invalid: number;
  readonly bytes: number;
  readonly urls_seen: number;
  /** Counters projector-pg keeps on the row from the events (its model/job-counters.ts); the status view shows them. */
  readonly pages_blocked: number;
  readonly duplicates: number;
  readonly sessions_replaced: number;
  readonly error_code: string | null;
  readonly error: string | null;
  readonly retry_of: string | null;
  /** The job a re-extraction parses again (its spec's `reextract_of`). */
  readonly reextract_of: string | null;
  readonly log_seq: number;
  /** Sort key: when the job came to be (requested, or dispatched for scheduled jobs). */
  readonly created_at: Date;
  /** Keyset position (created_at with microseconds). */
  readonly sort_at: string;
}

const CREATED = 'coalesce(requested_at, dispatched_at, updated_at)';
const COLUMNS = `job_id::text AS job_id, user_id, schedule_id::text AS schedule_id, target_id::text AS target_id,
  website_id::text AS website_id, status, start_urls, search_url, spider, max_depth AS depth, max_pages, params, requested_at, dispatched_at, first_page_at, finished_at,
  coalesce(pages_fetched, 0) AS pages_fetched, coalesce(pages_failed, 0) AS pages_failed,
  coalesce(items_extracted, 0) AS items_extracted, coalesce(items_invalid, 0) AS items_invalid, coalesce(bytes, 0) AS bytes, coalesce(urls_seen, 0) AS urls_seen,
  coalesce(pages_blocked, 0) AS pages_blocked, coalesce(duplicates, 0) AS duplicates, coalesce(sessions_replaced, 0) AS sessions_replaced,
  error_code, error, retry_of, spec->>'reextract_of' AS reextract_of, coalesce(log_seq, 0) AS log_seq, ${CREATED} AS created_at, ${sortAt(CREATED)} AS sort_at`;

interface AcceptedRow {
  readonly job_id: string;
  readonly user_id: string;
  readonly request: {
    readonly start_urls: readonly string[];
    readonly spider: string | null;
    readonly depth: number;
    readonly max_pages: number | null;
    readonly params?: Readonly<Record<string, string>>;
    readonly retry_of?: string | null;
    readonly reextract_of?: string | null;
  };
  readonly requested_at: Date;
  readonly sort_at: string;
}

/** What a job accepted by the API looks like before projector-pg has seen it. */
function pendingFromAccepted(a: AcceptedRow): JobRow {
  return {
    job_id: a.job_id,
    user_id: a.user_id,
    schedule_id: null,
    target_id: null,
    website_id: a.request.spider,
    status: 'pending',
    start_urls: a.request.start_urls,
    search_url: a.request.start_urls[0] ?? null,
    spider: a.request.spider,
    depth: a.request.depth,
    max_pages: a.request.max_pages,
    params: a.request.params ?? {},
    requested_at: a.requested_at,
    dispatched_at: null,
    first_page_at: null,
    finished_at: null,
    pages_fetched: 0,
    pages_failed: 0,
    items_extracted: 0,
    items_invalid: 0,
    bytes: 0,
    urls_seen: 0,
    pages_blocked: 0,
    duplicates: 0,
    sessions_replaced: 0,
    error_code: null,
    error: null,
    retry_of: a.request.retry_of ?? null,
    reextract_of: a.request.reextract_of ?? null,
    log_seq: 0,
    created_at: a.requested_at,
    sort_at: a.sort_at,
  };
}

/** The caller's job, or undefined (unknown, or somebody else's). */
export async function findJob(db: Db, jobId: string, userId: string): Promise<JobRow | undefined> {
  const { rows } = await db.query<JobRow>(`SELECT ${COLUMNS} FROM jobs WHERE job_id = $1 AND user_id = $2`, [jobId, userId]);
  if (rows[0]) return rows[0];
  const accepted = await db.query<AcceptedRow>(
    `SELECT job_id, user_id, request, requested_at, ${sortAt('requested_at')} AS sort_at FROM api_jobs WHERE job_id = $1 AND user_id = $2`,
    [jobId, userId],
  );
  return accepted.rows[0] ? pendingFromAccepted(accepted.rows[0]) : undefined;
}

/** Which of `jobIds` belong to `userId`, in the read model or accepted by the API and not yet projected: one query. */
export async function ownedJobIds(db: Db, jobIds: readonly string[], userId: string): Promise<Set<string>> {
  const { rows } = await db.query<{ job_id: string }>(
    `SELECT job_id FROM jobs WHERE job_id = ANY($1::text[]) AND user_id = $2
     UNION SELECT job_id FROM api_jobs WHERE job_id = ANY($1::text[]) AND user_id = $2`,
    [jobIds, userId],
  );
  return new Set(rows.map((r) => r.job_id));
}

/** The owner of a job, for the live feed: read model first, then the API's own record. */
export async function jobOwner(db: Db, jobId: string): Promise<string | null> {
  const { rows } = await db.query<{ user_id: string | null }>('SELECT user_id FROM jobs WHERE job_id = $1', [jobId]);
  if (rows[0]?.user_id) return rows[0].user_id;
  const accepted = await db.query<{ user_id: string }>('SELECT user_id FROM api_jobs WHERE job_id = $1', [jobId]);
  return accepted.rows[0]?.user_id ?? null;
}

export interface JobListQuery {
  readonly userId: string;
  readonly statuses?: readonly JobStatus[];
  readonly scheduleId?: string;
  readonly since?: Date;
  readonly until?: Date;
  readonly limit: number;
  readonly after?: { readonly sortAt: string; readonly jobId: string };
}

/** How long an accepted job may stay unprojected and still be listed as pending. */
const UNPROJECTED_WINDOW = '10 minutes';

/** Newest first, keyset-paginated on (created_at, job_id). */
export async function listJobs(db: Db, q: JobListQuery): Promise<JobRow[]> {
  const where = ['user_id = $1'];
  const args: unknown[] = [q.userId];
  const arg = (v: unknown) => `$${args.push(v)}`;
  if (q.statuses?.length) where.push(`status = ANY(${arg(q.statuses)}::text[])`);
  if (q.scheduleId) where.push(`schedule_id::text = ${arg(q.scheduleId)}`);
  if (q.since) where.push(`${CREATED} >= ${arg(q.since)}`);
  if (q.until) where.push(`${CREATED} < ${arg(q.until)}`);
  if (q.after) where.push(`(${CREATED}, job_id::text) < (${arg(q.after.sortAt)}::timestamptz, ${arg(q.after.jobId)})`);
  const { rows } = await db.query<JobRow>(
    `SELECT ${COLUMNS} FROM jobs WHERE ${where.join(' AND ')} ORDER BY ${CREATED} DESC, job_id::text DESC LIMIT ${arg(q.limit)}`,
    args,
  );
  const wantsPending = !q.statuses?.length || q.statuses.includes('pending');
  if (q.after || q.scheduleId || !wantsPending) return rows;

  // First page: add the caller's jobs accepted moments ago and not projected yet.
  const accepted = await db.query<AcceptedRow>(
    `SELECT job_id, user_id, request, requested_at, ${sortAt('requested_at')} AS sort_at FROM api_jobs
     WHERE user_id = $1 AND requested_at > now() - interval '${UNPROJECTED_WINDOW}'
       AND ($2::timestamptz IS NULL OR requested_at >= $2) AND ($3::timestamptz IS NULL OR requested_at < $3)
     ORDER BY requested_at DESC LIMIT $4`,
    [q.userId, q.since ?? null, q.until ?? null, q.limit],
  );
  if (accepted.rows.length === 0) return rows;
  const projected = await db.query<{ job_id: string }>('SELECT job_id::text AS job_id FROM jobs WHERE job_id = ANY($1)', [
    accepted.rows.map((a) => a.job_id),
  ]);
  const known = new Set([...projected.rows.map((r) => r.job_id), ...rows.map((r) => r.job_id)]);
  const pending = accepted.rows.filter((a) => !known.has(a.job_id)).map(pendingFromAccepted);
  return [...pending, ...rows]
    .sort((a, b) => (a.sort_at === b.sort_at ? (a.job_id < b.job_id ? 1 : -1) : a.sort_at < b.sort_at ? 1 : -1))
    .slice(0, q.limit);
}

export interface JobProgress {
  readonly status: JobStatus;
  readonly log_seq: number;
  readonly pages_fetched: number;
  readonly pages_failed: number;
  readonly items_extracted: number;
  readonly error: string | null;
}

/** A job's status, how far its log has got and its counters: what an SSE log stream polls. */
export async function jobProgress(db: Db, jobId: string): Promise<JobProgress | undefined> {
  const { rows } = await db.query<JobProgress>(
    `SELECT status, coalesce(log_seq, 0) AS log_seq, coalesce(pages_fetched, 0) AS pages_fetched,
       coalesce(pages_failed, 0) AS pages_failed, coalesce(items_extracted, 0) AS items_extracted, error
     FROM jobs WHERE job_id = $1`,
    [jobId],
  );
  return rows[0];
}

/** One host's adaptive throttle setting, as a job's view shows it. */
export interface ThrottleSettingView {
  readonly host: string;
  readonly delay_ms: number;
  readonly concurrency: number;
  readonly at: Date;
}

/**
 * What the adaptive throttle last chose per host for the job: the workers say a host's setting on a
 * PageFetched when it moved enough (PageFetched.throttle, the worker's throttle-reports.ts, at most
 * 100 per job and worker), and its log line keeps it in `data`. Read from there, the latest line
 * per host (in the log's order: the order the events were written), so the read model needed no
 * new table.
 */
export async function throttleSettings(db: Db, jobId: string): Promise<ThrottleSettingView[]> {
  const { rows } = await db.query<ThrottleSettingView>(
    `SELECT host, delay_ms, concurrency, at FROM (
       SELECT DISTINCT ON (data->'throttle'->>'host') data->'throttle'->>'host' AS host,
              (data->'throttle'->>'delay_ms')::int AS delay_ms, (data->'throttle'->>'concurrency')::int AS concurrency, ts AS at
         FROM job_log WHERE job_id = $1 AND event = 'PageFetched' AND data ? 'throttle'
        ORDER BY data->'throttle'->>'host', seq DESC
     ) latest ORDER BY host`,
    [jobId],
  );
  return rows;
}
