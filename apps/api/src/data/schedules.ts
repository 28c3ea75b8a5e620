/** Schedule writes the store does not offer, scoped to an owner. */
import { firstDue, getSchedule, inTransaction, type Pool, type Schedule } from '@trawl/store';

/**
 * Resumes a paused schedule. A repeating schedule restarts from now (the slots missed while
 * paused are skipped, not caught up); a one-shot keeps its time, so one whose time has passed runs
 * at the next dispatcher tick.
 */
export async function resumeSchedule(pool: Pool, id: string, ownerId: string, now: Date = new Date()): Promise<Schedule | undefined> {
  return inTransaction(pool, async (tx) => {
    const { rows } = await tx.query<Schedule>(
      "SELECT * FROM schedules WHERE id = $1 AND owner_id = $2 AND status = 'paused' FOR UPDATE",
      [id, ownerId],
    );
    const s = rows[0];
    if (!s) return undefined;
    const repeats = Boolean(s.cron || s.interval_ms);
    const next = repeats ? firstDue({ cron: s.cron, intervalMs: s.interval_ms }, now) : s.next_due;
    await tx.query("UPDATE schedules SET status = 'active', next_due = $2, updated_at = now() WHERE id = $1", [id, next]);
    return getSchedule(tx, id);
  });
}
