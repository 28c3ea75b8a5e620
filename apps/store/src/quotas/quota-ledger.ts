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

/** Settles the users' ledger rows whose jobs are over, then sums what each user uses. */
export async function readUsage(tx: PoolClient, userIds: readonly string[], now: Date = new Date()): Promise<Map<string, QuotaUsage>> {
  const users = [...new Set(userIds)];
  const out = new Map<string, QuotaUsage>(users.map((u) => [u, { active_jobs: 0, pages_today: 0 }]));
  if (users.length === 0) return out;
  await settle(tx, users);
  const { rows } = await tx.query<{ user_id: string; active_jobs: number; pages_today: number }>(
    `SELECT user_id,
       count(*) FILTER (WHERE settled_pages IS NULL)::int AS active_jobs,
       coalesce(sum(CASE WHEN settled_pages IS NULL THEN max_pages ELSE least(settled_pages, max_pages) END)
         FILTER (WHERE created_at > $2::timestamptz - interval '1 day'), 0)::bigint AS pages_today
     FROM job_quota_ledger
     WHERE user_id = ANY($1::text[]) AND (settled_pages IS NULL OR created_at > $2::timestamptz - interval '1 day')
     GROUP BY user_id`,
    [users, now],
  );
  for (const r of rows) out.set(r.user_id, { active_jobs: r.active_jobs, pages_today: Number(r.pages_today) });
  return out;
}

/** Writes the real page count of ledger rows whose jobs the read model shows over. */
async function settle(tx: PoolClient, users: readonly string[]): Promise<void> {
  const open = await tx.query<{ job_id: string }>(
    'SELECT job_id FROM job_quota_ledger WHERE user_id = ANY($1::text[]) AND settled_pages IS NULL',
    [users],
  );
  if (open.rows.length === 0) return;
  // Without projector-pg's read model (a bare dispatcher database) nothing can be seen to end.
  const { rows: present } = await tx.query<{ present: boolean }>("SELECT to_regclass('jobs') IS NOT NULL AS present");
  if (!present[0]!.present) return;
  await tx.query(
    `UPDATE job_quota_ledger AS l SET settled_pages = coalesce(j.pages_fetched, 0) + coalesce(j.pages_failed, 0)
     FROM jobs AS j
     WHERE j.job_id = ANY($1::text[]) AND j.status = ANY($2::text[]) AND l.job_id = j.job_id AND l.settled_pages IS NULL`,
    [open.rows.map((r) => r.job_id), TERMINAL],
  );
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
