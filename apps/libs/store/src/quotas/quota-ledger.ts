/**
 * The quota ledger (`job_quota_ledger`): one row per job a user started — written in the same
 * transaction that starts it, by the API for crawls and by the dispatcher for scheduled jobs —
 * with the pages it may fetch. A row is settled (its real page count written) once the read model
 * (projector-pg's `jobs`) shows the job over; until then it counts as an active job and its whole
 * `max_pages` counts against the day.
 *
 * Checks and starts of one user are serialised by a transaction-scoped advisory lock, so two
 * concurrent requests cannot both take the last slot.
 */
import type { PoolClient } from 'pg';
import type { QuotaUsage } from './quota-decision.ts';

const TERMINAL = ['finished', 'failed', 'cancelled'];

/**
 * Takes the users' quota locks for the transaction, in one statement and in a fixed order (the
 * sorted subquery is scanned in order), so two batches of the dispatcher never deadlock.
 */
export async function lockUserQuotas(tx: PoolClient, userIds: readonly string[]): Promise<void> {
  if (userIds.length === 0) return;
  await tx.query(
    `SELECT pg_advisory_xact_lock(hashtext('trawl-quota:' || u))
     FROM (SELECT DISTINCT u FROM unnest($1::text[]) AS u ORDER BY u) AS sorted`,
    [[...userIds]],
  );
}

/**
 * The users' ledger rows that count: those that may still run, and those of the last 24 hours; a
 * reservation (quota-reservation.ts) while it is pending or once confirmed, not after it lapsed.
 */
const LEDGER = `SELECT job_id, user_id, created_at, max_pages, settled_pages FROM job_quota_ledger
  WHERE user_id = ANY($1::text[]) AND (settled_pages IS NULL OR created_at > $2::timestamptz - interval '1 day')
    AND (pending_until IS NULL OR pending_until > now())`;

/**
 * One statement: the rows that count, the read model's word on those still open (their jobs
 * over, with their real page counts), the settling of those rows, and the sums. The sums are taken
 * from the rows as read plus what the read model said (a statement does not see its own updates).
 */
const USAGE_SETTLING = `
  WITH ledger AS (${LEDGER}),
  ended AS (
    SELECT j.job_id, coalesce(j.pages_fetched, 0) + coalesce(j.pages_failed, 0) AS pages
    FROM jobs AS j JOIN ledger AS l ON l.job_id = j.job_id
    WHERE l.settled_pages IS NULL AND j.status = ANY($3::text[])
  ),
  settle AS (
    UPDATE job_quota_ledger AS q SET settled_pages = e.pages FROM ended AS e WHERE q.job_id = e.job_id AND q.settled_pages IS NULL
  )
  SELECT l.user_id,
    count(*) FILTER (WHERE l.settled_pages IS NULL AND e.job_id IS NULL)::int AS active_jobs,
    coalesce(sum(least(coalesce(l.settled_pages, e.pages, l.max_pages), l.max_pages))
      FILTER (WHERE l.created_at > $2::timestamptz - interval '1 day'), 0)::bigint AS pages_today
  FROM ledger AS l LEFT JOIN ended AS e ON e.job_id = l.job_id
  GROUP BY l.user_id`;

/** Without projector-pg's read model (a bare dispatcher database) nothing can be seen to end. */
const USAGE_UNSETTLED = `
  WITH ledger AS (${LEDGER})
  SELECT user_id,
    count(*) FILTER (WHERE settled_pages IS NULL)::int AS active_jobs,
    coalesce(sum(least(coalesce(settled_pages, max_pages), max_pages))
      FILTER (WHERE created_at > $2::timestamptz - interval '1 day'), 0)::bigint AS pages_today
  FROM ledger GROUP BY user_id`;

/** Settles the users' ledger rows whose jobs are over, and sums what each user uses. */
export async function readUsage(tx: PoolClient, userIds: readonly string[], now: Date = new Date()): Promise<Map<string, QuotaUsage>> {
  const users = [...new Set(userIds)];
  const out = new Map<string, QuotaUsage>(users.map((u) => [u, { active_jobs: 0, pages_today: 0 }]));
  if (users.length === 0) return out;
  const { rows: present } = await tx.query<{ present: boolean }>("SELECT to_regclass('jobs') IS NOT NULL AS present");
  const { rows } = present[0]!.present
    ? await tx.query<{ user_id: string; active_jobs: number; pages_today: number }>(USAGE_SETTLING, [users, now, TERMINAL])
    : await tx.query<{ user_id: string; active_jobs: number; pages_today: number }>(USAGE_UNSETTLED, [users, now]);
  for (const r of rows) out.set(r.user_id, { active_jobs: r.active_jobs, pages_today: Number(r.pages_today) });
  return out;
}

export interface LedgerEntry {
  readonly job_id: string;
  readonly user_id: string;
  readonly max_pages: number;
}

/** Records started jobs (a job started twice — a re-dispatched slot — counts once). */
export async function recordJobs(tx: PoolClient, entries: readonly LedgerEntry[]): Promise<void> {
  if (entries.length === 0) return;
  await tx.query(
    `INSERT INTO job_quota_ledger (job_id, user_id, max_pages)
     SELECT * FROM unnest($1::text[], $2::text[], $3::int[]) ON CONFLICT (job_id) DO NOTHING`,
    [entries.map((e) => e.job_id), entries.map((e) => e.user_id), entries.map((e) => e.max_pages)],
  );
}

/** Drops settled rows too old to count for anything (older than two days). */
export async function purgeSettledLedger(tx: Pick<PoolClient, 'query'>): Promise<number> {
  const { rowCount } = await tx.query("DELETE FROM job_quota_ledger WHERE settled_pages IS NOT NULL AND created_at < now() - interval '2 days'");
  return rowCount ?? 0;
}
