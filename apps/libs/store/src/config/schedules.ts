import type { Pool, PoolClient } from 'pg';
import { firstDue, validateCadence, type Cadence } from '../schedules/cadence.ts';
import type { CrawlRequest, OverlapPolicy, Schedule, ScheduleStatus } from './types.ts';

type Db = Pool | PoolClient;

const COLUMNS = [
  'id', 'owner_id', 'target_id', 'request', 'cron', 'interval_ms', 'run_at', 'status', 'last_scheduled', 'last_job_id',
  'next_due', 'created_at', 'paused_reason', 'paused_message', 'paused_at', 'skipped_at', 'skipped_reason', 'time_zone', 'overlap', 'dedupe',
].join(', ');

export interface NewSchedule {
  readonly id: string;
  readonly owner_id: string | null;
  readonly target_id?: string | null;
  readonly request?: CrawlRequest | null;
  readonly cadence: Cadence;
  /** Default skip. */
  readonly overlap?: OverlapPolicy;
  /** Default false. */
  readonly dedupe?: boolean;
}

export function cadenceOf(s: Pick<Schedule, 'cron' | 'interval_ms' | 'run_at' | 'time_zone'>): Cadence {
  return { cron: s.cron, intervalMs: s.interval_ms, runAt: s.run_at, timeZone: s.time_zone };
}

/** Creates a schedule (idempotent by id); its first slot is computed from `now`. */
export async function createSchedule(db: Db, s: NewSchedule, now: Date = new Date()): Promise<Schedule> {
  validateCadence(s.cadence);
  const next = firstDue(s.cadence, now);
  const { rows } = await db.query<Schedule>(
    `INSERT INTO schedules (id, owner_id, target_id, request, cron, interval_ms, run_at, next_due, time_zone, overlap, dedupe)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
     ON CONFLICT (id) DO UPDATE SET updated_at = schedules.updated_at
     RETURNING ${COLUMNS}`,
    [s.id, s.owner_id, s.target_id ?? null, s.request ? JSON.stringify(s.request) : null, s.cadence.cron ?? null,
      s.cadence.intervalMs ?? null, s.cadence.runAt ?? null, next, s.cadence.timeZone || 'UTC', s.overlap ?? 'skip', s.dedupe ?? false],
  );
  return rows[0]!;
}

export async function getSchedule(db: Db, id: string): Promise<Schedule | undefined> {
  const { rows } = await db.query<Schedule>(`SELECT ${COLUMNS} FROM schedules WHERE id = $1`, [id]);
  return rows[0];
}

export async function listSchedules(db: Db, ownerId: string): Promise<Schedule[]> {
  const { rows } = await db.query<Schedule>(`SELECT ${COLUMNS} FROM schedules WHERE owner_id = $1 ORDER BY created_at DESC`, [ownerId]);
  return rows;
}

/**
 * Locks up to `limit` due active schedules for this transaction. SKIP LOCKED lets several
 * dispatcher replicas share the work: a row another replica holds is simply not seen. `exclude`
 * leaves out schedules this tick already held back (still due, but not to be claimed again).
 */
export async function claimDueSchedules(tx: PoolClient, now: Date, limit: number, exclude: readonly string[] = []): Promise<Schedule[]> {
  const { rows } = await tx.query<Schedule>(
    `SELECT ${COLUMNS} FROM schedules
     WHERE status = 'active' AND next_due <= $1 AND NOT (id = ANY($3::text[]))
     ORDER BY next_due LIMIT $2 FOR UPDATE SKIP LOCKED`,
    [now, limit, exclude],
  );
  return rows;
}

export interface DispatchedSlot {
  readonly id: string;
  readonly slot: Date;
  readonly jobId: string;
  readonly next: Date | null;
}

/** Records that each `slot` was dispatched as its `jobId` (`next` null ends a one-shot schedule): a dispatcher batch in one statement. */
export async function markDispatchedMany(tx: PoolClient, slots: readonly DispatchedSlot[]): Promise<void> {
  if (slots.length === 0) return;
  await tx.query(
    `UPDATE schedules AS s SET last_scheduled = m.slot, last_job_id = m.job_id, next_due = m.next,
       status = CASE WHEN m.next IS NULL THEN 'done' ELSE s.status END, updated_at = now()
     FROM unnest($1::text[], $2::timestamptz[], $3::text[], $4::timestamptz[]) AS m (id, slot, job_id, next)
     WHERE s.id = m.id`,
    [slots.map((x) => x.id), slots.map((x) => x.slot), slots.map((x) => x.jobId), slots.map((x) => x.next)],
  );
}

export interface ScheduleChange {
  readonly cadence: Cadence;
  readonly request: CrawlRequest | null;
  readonly overlap: OverlapPolicy;
  readonly dedupe: boolean;
}

/**
 * Rewrites a schedule's cadence, time zone, request, overlap policy and dedupe (the caller merges the
 * change into the current values and checks its quotas). `next_due` moves to the new cadence's
 * first slot after `now`, so a changed cron takes effect at once (a paused schedule's is
 * recomputed again when it is resumed). Cancelled and done schedules are not changed (undefined).
 */
export async function updateSchedule(db: Db, id: string, change: ScheduleChange, now: Date = new Date()): Promise<Schedule | undefined> {
  validateCadence(change.cadence);
  const c = change.cadence;
  // A start time already passed (kept from before) does not pull a repeating schedule back into the past.
  const repeats = Boolean(c.cron || c.intervalMs);
  const next = repeats && c.runAt && c.runAt <= now ? firstDue({ ...c, runAt: null }, now) : firstDue(c, now);
  const { rows } = await db.query<Schedule>(
    `UPDATE schedules SET cron = $2, interval_ms = $3, run_at = $4, time_zone = $5, request = $6, overlap = $7,
       next_due = $8, dedupe = $9, updated_at = now()
     WHERE id = $1 AND status IN ('active', 'paused') RETURNING ${COLUMNS}`,
    [id, c.cron ?? null, c.intervalMs ?? null, c.runAt ?? null, c.timeZone || 'UTC', change.request ? JSON.stringify(change.request) : null,
      change.overlap, next, change.dedupe],
  );
  return rows[0];
}

/** Pauses, resumes or cancels a schedule of `ownerId`; false when it is not theirs or not found. A user's own change clears the dispatcher's reason. */
export async function setScheduleStatus(db: Db, id: string, ownerId: string, status: Exclude<ScheduleStatus, 'done'>): Promise<Schedule | undefined> {
  const { rows } = await db.query<Schedule>(
    `UPDATE schedules SET status = $3, paused_reason = NULL, paused_message = NULL, paused_at = NULL, updated_at = now()
     WHERE id = $1 AND owner_id = $2 AND status NOT IN ('cancelled', 'done') RETURNING ${COLUMNS}`,
    [id, ownerId, status],
  );
  return rows[0];
}

export interface PausedSchedule {
  readonly id: string;
  /** A code users and operators can act on (`WEBSITE_GONE`, `WEBSITE_NOT_OWNED`, …). */
  readonly reason: string;
  readonly message: string;
}

/** The dispatcher's pauses, with their reasons, in one statement. */
export async function pauseSchedules(tx: PoolClient, paused: readonly PausedSchedule[]): Promise<void> {
  if (paused.length === 0) return;
  await tx.query(
    `UPDATE schedules AS s SET status = 'paused', paused_reason = p.reason, paused_message = p.message, paused_at = now(), updated_at = now()
     FROM unnest($1::text[], $2::text[], $3::text[]) AS p (id, reason, message)
     WHERE s.id = p.id`,
    [paused.map((p) => p.id), paused.map((p) => p.reason), paused.map((p) => p.message)],
  );
}

export interface SkippedSlot {
  readonly id: string;
  readonly slot: Date;
  readonly next: Date | null;
  readonly reason: string;
}

/** Slots the dispatcher skipped (a quota): the schedule moves on to its next slot, and says why it skipped this one. */
export async function markSkippedMany(tx: PoolClient, slots: readonly SkippedSlot[]): Promise<void> {
  if (slots.length === 0) return;
  await tx.query(
    `UPDATE schedules AS s SET skipped_at = m.slot, skipped_reason = m.reason, next_due = m.next,
       status = CASE WHEN m.next IS NULL THEN 'done' ELSE s.status END, updated_at = now()
     FROM unnest($1::text[], $2::timestamptz[], $3::timestamptz[], $4::text[]) AS m (id, slot, next, reason)
     WHERE s.id = m.id`,
    [slots.map((x) => x.id), slots.map((x) => x.slot), slots.map((x) => x.next), slots.map((x) => x.reason)],
  );
}

/** Schedules that count against a user's quota: those that may still run (active or paused). */
export async function countLiveSchedules(db: Db, ownerId: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM schedules WHERE owner_id = $1 AND status IN ('active', 'paused')",
    [ownerId],
  );
  return rows[0]!.n;
}
