/** Schedule writes the store does not offer, scoped to an owner. */
import { cadenceOf, checkCadenceQuota, firstDue, getSchedule, inTransaction, type Pool, type QuotaLimits, type Schedule } from '@trawl/store';

/**
 * Resumes a paused schedule. A repeating schedule restarts from now (the slots missed while
 * paused are skipped, not caught up); a one-shot keeps its time, so one whose time has passed runs
 * at the next dispatcher tick. A cadence below the owner's minimum interval stays paused
 * (INTERVAL_TOO_SHORT): the dispatcher would only pause it again. Resuming clears the reason the
 * dispatcher paused it for; if that reason still holds, the next slot pauses it again with it.
 */
export async function resumeSchedule(pool: Pool, id: string, ownerId: string, quotas: QuotaLimits, now: Date = new Date()): Promise<Schedule | undefined> {
  return inTransaction(pool, async (tx) => {
    const { rows } = await tx.query<Schedule>(
      "SELECT * FROM schedules WHERE id = $1 AND owner_id = $2 AND status = 'paused' FOR UPDATE",
      [id, ownerId],
    );
    const s = rows[0];
    if (!s) return undefined;
    await checkCadenceQuota(tx, ownerId, quotas, cadenceOf(s));
    const repeats = Boolean(s.cron || s.interval_ms);
    const next = repeats ? firstDue({ ...cadenceOf(s), runAt: null }, now) : s.next_due;
    await tx.query(
      `UPDATE schedules SET status = 'active', next_due = $2, paused_reason = NULL, paused_message = NULL, paused_at = NULL, updated_at = now()
       WHERE id = $1`,
      [id, next],
    );
    return getSchedule(tx, id);
  });
}
