/**
 * The delivery budget's ledger (`webhook_usage.deliveries`): apps/services/webhooks reserves a
 * user's delivery units here a lease at a time, under the user's lock, so however many instances
 * reserve at once their reservations together never pass the user's hourly limit; what a lease did
 * not use is given back. The service's side (leases, holding, when a held delivery comes back) is
 * its delivery-budget.ts.
 */
import type { Pool, PoolClient } from 'pg';
import { inTransaction } from '../pool.ts';
import { IN_WINDOW_SQL, roomAt, usedAt, type Bucket } from './hourly-window.ts';

export interface DeliveryReservation {
  /** Units granted (0: the hour is spent). */
  readonly granted: number;
  /** The minute they are counted in: what a give-back names. */
  readonly minute: Date;
  /** The database's clock (epoch ms) when they were granted. */
  readonly now: number;
  /** When one unit fits again, on the database's clock: `now` while the hour has room. */
  readonly roomAt: number;
}

export interface DeliveryGiveBack {
  readonly userId: string;
  readonly minute: Date;
  readonly units: number;
}

// Summed per row first: an UPDATE … FROM applies one matching row of the join, not each.
const GIVE_BACK = `UPDATE webhook_usage AS u SET deliveries = greatest(u.deliveries - g.units, 0)
  FROM (SELECT user_id, minute, sum(units)::int AS units FROM jsonb_to_recordset($1::jsonb) AS r(user_id text, minute timestamptz, units int) GROUP BY 1, 2) AS g
  WHERE u.user_id = g.user_id AND u.minute = g.minute`;

const giveBackRows = (back: readonly DeliveryGiveBack[]): string => JSON.stringify(back.map((b) => ({ user_id: b.userId, minute: b.minute.toISOString(), units: b.units })));

/**
 * Reserves up to `want` of the user's delivery units under `limit` for the current minute, first
 * giving back what an earlier lease left (`giveBack`, in the same transaction).
 */
export async function reserveDeliveries(pool: Pool, userId: string, limit: number, want: number, giveBack?: DeliveryGiveBack): Promise<DeliveryReservation> {
  return inTransaction(pool, async (tx) => {
    await tx.query(`SELECT pg_advisory_xact_lock(hashtext('trawl-webhook-budget:' || $1))`, [userId]);
    if (giveBack && giveBack.units > 0) await tx.query(GIVE_BACK, [giveBackRows([giveBack])]);
    const { rows } = await tx.query<{ now: number; minute: Date; buckets: Bucket[] }>(
      `SELECT (extract(epoch FROM now()) * 1000)::float8 AS now, date_trunc('minute', now()) AS minute,
         coalesce((SELECT json_agg(json_build_object('at', extract(epoch FROM minute) * 1000, 'n', deliveries))
                   FROM webhook_usage WHERE user_id = $1 AND deliveries > 0 AND ${IN_WINDOW_SQL}), '[]') AS buckets`,
      [userId],
    );
    const { now, minute, buckets } = rows[0]!;
    const granted = Math.max(0, Math.min(want, limit - usedAt(buckets, now)));
    if (granted > 0) {
      await tx.query(
        `INSERT INTO webhook_usage (user_id, minute, deliveries) VALUES ($1, $2, $3)
         ON CONFLICT (user_id, minute) DO UPDATE SET deliveries = webhook_usage.deliveries + EXCLUDED.deliveries`,
        [userId, minute, granted],
      );
    }
    return { granted, minute, now, roomAt: granted > 0 ? now : roomAt(buckets, limit, now) };
  });
}

/** Gives back what leases did not use (a lease that ended, an instance that stops). */
export async function giveBackDeliveries(db: Pool | PoolClient, back: readonly DeliveryGiveBack[]): Promise<void> {
  const units = back.filter((b) => b.units > 0);
  if (units.length > 0) await db.query(GIVE_BACK, [giveBackRows(units)]);
}
