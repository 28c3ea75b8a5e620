/**
 * A job's quota as a reservation, so the user's quota lock is held for the decision alone, not
 * across the produce of the job's events (the API's admission, `POST /crawl`, `/scrape`, `/map`).
 *
 * 1. `reserveJob`: a transaction of its own takes the user's quota lock, decides (as admitJob) and
 *    writes the job's ledger row with `pending_until` ahead; it commits, which frees the lock. From
 *    then on the row counts like any job's: a concurrent admission sees it.
 * 2. The caller produces the job's events and, in the transaction that commits the job (after
 *    Kafka acknowledged them), `confirmJob`s the row: it counts for good.
 * 3. Nothing started (Kafka refused, an identical crawl answered from the dedupe row): the caller
 *    `releaseJob`s the row. A caller that dies before either leaves a pending row, which stops
 *    counting once `pending_until` has passed (RESERVATION_SECONDS): a lost reservation costs the
 *    user a slot for a few minutes, never for good.
 *
 * One user's admissions therefore run side by side except for the decision itself (a few
 * statements): they were one at a time for the whole produce round trip before.
 */
import type { Pool, PoolClient } from 'pg';
import { inTransaction } from '../pool.ts';
import { decideJob } from './quota-decision.ts';
import { QuotaExceededError } from './errors.ts';
import { quotaLimitsOf, type QuotaLimits } from './quota-limits.ts';
import { lockUserQuotas, readUsage } from './quota-ledger.ts';

/** How long a reservation counts without being confirmed: far longer than an admission's produce takes, even retried. */
export const RESERVATION_SECONDS = 300;

/**
 * Decides whether a job asking for `wantedPages` may start (QuotaExceededError if not) and
 * reserves its place in the user's quotas, committed on return.
 */
export async function reserveJob(pool: Pool, reservation: { jobId: string; userId: string; wantedPages: number }, defaults: QuotaLimits, now: Date = new Date()): Promise<{ maxPages: number; capped: boolean }> {
  const { jobId, userId, wantedPages } = reservation;
  return inTransaction(pool, async (tx) => {
    await lockUserQuotas(tx, [userId]);
    const limits = (await quotaLimitsOf(tx, [userId], defaults)).get(userId)!;
    const usage = (await readUsage(tx, [userId], now)).get(userId)!;
    const decision = decideJob(limits, usage, wantedPages);
    if (!decision.ok) throw new QuotaExceededError(decision);
    await tx.query(
      `INSERT INTO job_quota_ledger (job_id, user_id, max_pages, pending_until)
       VALUES ($1, $2, $3, now() + make_interval(secs => $4))`,
      [jobId, userId, decision.maxPages, RESERVATION_SECONDS],
    );
    return { maxPages: decision.maxPages, capped: decision.capped };
  });
}

/** In the transaction that commits the job (its events acknowledged): the reservation counts for good. */
export async function confirmJob(tx: Pick<PoolClient, 'query'>, jobId: string): Promise<void> {
  await tx.query('UPDATE job_quota_ledger SET pending_until = NULL WHERE job_id = $1', [jobId]);
}

/** The job did not start: its reservation is dropped (a confirmed row is never touched). */
export async function releaseJob(db: Pick<Pool, 'query'>, jobId: string): Promise<void> {
  await db.query('DELETE FROM job_quota_ledger WHERE job_id = $1 AND pending_until IS NOT NULL', [jobId]);
}
