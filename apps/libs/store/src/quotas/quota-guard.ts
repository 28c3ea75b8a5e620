/**
 * Quota checks at the edges that start work: a job about to start (inside the transaction that
 * records it), a schedule about to be created. Each takes the user's quota lock first.
 */
import type { Pool, PoolClient } from 'pg';
import { inTransaction } from '../pool.ts';
import { createSchedule, countLiveSchedules, type NewSchedule } from '../config/schedules.ts';
import type { Schedule } from '../config/types.ts';
import { shortestGapMs } from '../schedules/cadence.ts';
import { decideInterval, decideJob, decideSchedule } from './quota-decision.ts';
import { QuotaExceededError } from './errors.ts';
import { quotaLimitsOf, type QuotaLimits } from './quota-limits.ts';
import { lockUserQuotas, readUsage } from './quota-ledger.ts';

/**
 * Inside the caller's transaction: locks the user's quotas and decides whether a job asking for
 * `wantedPages` may start, and with how many pages at most. Throws QuotaExceededError. The caller
 * records the job (`recordJobs`) in the same transaction once it has started it.
 */
export async function admitJob(tx: PoolClient, userId: string, defaults: QuotaLimits, wantedPages: number, now: Date = new Date()): Promise<{ maxPages: number; capped: boolean }> {
  await lockUserQuotas(tx, [userId]);
  const limits = (await quotaLimitsOf(tx, [userId], defaults)).get(userId)!;
  const usage = (await readUsage(tx, [userId], now)).get(userId)!;
  const decision = decideJob(limits, usage, wantedPages);
  if (!decision.ok) throw new QuotaExceededError(decision);
  return { maxPages: decision.maxPages, capped: decision.capped };
}

/** Refuses a cadence whose runs come closer than the user's minimum interval (QuotaExceededError). */
export async function checkCadenceQuota(db: Pool | PoolClient, userId: string, defaults: QuotaLimits, cadence: NewSchedule['cadence']): Promise<void> {
  const limits = (await quotaLimitsOf(db, [userId], defaults)).get(userId)!;
  const refusal = decideInterval(limits, shortestGapMs(cadence));
  if (refusal) throw new QuotaExceededError(refusal);
}

/** Creates a schedule of its owner within their quotas: minimum interval, number of schedules. */
export async function createScheduleWithinQuota(pool: Pool, s: NewSchedule & { readonly owner_id: string }, defaults: QuotaLimits, now: Date = new Date()): Promise<Schedule> {
  return inTransaction(pool, async (tx) => {
    await lockUserQuotas(tx, [s.owner_id]);
    await checkCadenceQuota(tx, s.owner_id, defaults, s.cadence);
    const limits = (await quotaLimitsOf(tx, [s.owner_id], defaults)).get(s.owner_id)!;
    const decision = decideSchedule(limits, await countLiveSchedules(tx, s.owner_id));
    if (!decision.ok) throw new QuotaExceededError(decision);
    return createSchedule(tx, s, now);
  });
}
