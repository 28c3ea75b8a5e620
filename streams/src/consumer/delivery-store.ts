/**
 * Where deliveries without an outcome are counted: one row per (group, topic, partition, offset)
 * of a message re-read after a crash, written before its handler runs and deleted once it has an
 * outcome. Rows below a partition's committed offset are stale by definition (everything there has
 * an outcome) and are removed when the partition is next taken on.
 *
 * Postgres rather than a header stamped on a re-produced copy: a copy moves the message to the
 * topic's end, which reorders a partition that consumers read in order (the frontier and every
 * projection) and, on an event topic, writes a second record of the event into the log that is the
 * source of truth. A row costs nothing on the hot path — only re-reads are counted — and every
 * deployment already runs the Postgres that holds the projections' offsets.
 */
import { createTableIfMissing, type Queryable } from '../util/pg-table.ts';

export const DELIVERIES_TABLE = 'stream_deliveries';

const CREATE_SQL = `CREATE TABLE IF NOT EXISTS ${DELIVERIES_TABLE} (
  group_id text NOT NULL,
  topic text NOT NULL,
  partition int NOT NULL,
  "offset" bigint NOT NULL,
  deliveries int NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (group_id, topic, partition, "offset")
)`;

/** Creates the table if missing. Safe when several processes start together. */
export function ensureDeliveriesTable(db: Queryable): Promise<void> {
  return createTableIfMissing(db, CREATE_SQL);
}

export interface MessagePosition {
  readonly topic: string;
  readonly partition: number;
  readonly offset: bigint;
}

export interface RecordedDeliveries extends MessagePosition {
  readonly deliveries: number;
}

const positions = (at: readonly MessagePosition[]) => [at.map((p) => p.topic), at.map((p) => p.partition), at.map((p) => String(p.offset))];

/** The deliveries recorded for these messages (those with none recorded are left out). */
export async function readDeliveries(db: Queryable, groupId: string, at: readonly MessagePosition[]): Promise<RecordedDeliveries[]> {
  if (at.length === 0) return [];
  const { rows } = await db.query<{ topic: string; partition: number; offset: string; deliveries: number }>(
    `SELECT d.topic, d.partition, d."offset", d.deliveries
       FROM ${DELIVERIES_TABLE} d
       JOIN unnest($2::text[], $3::int[], $4::bigint[]) AS k(topic, partition, "offset")
         ON d.topic = k.topic AND d.partition = k.partition AND d."offset" = k."offset"
      WHERE d.group_id = $1`,
    [groupId, ...positions(at)],
  );
  return rows.map((r) => ({ topic: r.topic, partition: r.partition, offset: BigInt(r.offset), deliveries: r.deliveries }));
}

/** Records (sets) the deliveries of these messages, one row each. */
export async function writeDeliveries(db: Queryable, groupId: string, entries: readonly RecordedDeliveries[]): Promise<void> {
  if (entries.length === 0) return;
  await db.query(
    `INSERT INTO ${DELIVERIES_TABLE} AS d (group_id, topic, partition, "offset", deliveries)
     SELECT $1, k.topic, k.partition, k."offset", k.deliveries
       FROM unnest($2::text[], $3::int[], $4::bigint[], $5::int[]) AS k(topic, partition, "offset", deliveries)
     ON CONFLICT (group_id, topic, partition, "offset") DO UPDATE SET deliveries = EXCLUDED.deliveries, updated_at = now()`,
    [groupId, ...positions(entries), entries.map((e) => e.deliveries)],
  );
}

/** Forgets these messages: they have an outcome. */
export async function deleteDeliveries(db: Queryable, groupId: string, at: readonly MessagePosition[]): Promise<void> {
  if (at.length === 0) return;
  await db.query(
    `DELETE FROM ${DELIVERIES_TABLE} d
      USING unnest($2::text[], $3::int[], $4::bigint[]) AS k(topic, partition, "offset")
      WHERE d.group_id = $1 AND d.topic = k.topic AND d.partition = k.partition AND d."offset" = k."offset"`,
    [groupId, ...positions(at)],
  );
}

/** Forgets a partition's messages below `offset` (committed, or applied: they all have an outcome). */
export async function deleteDeliveriesBelow(db: Queryable, groupId: string, topic: string, partition: number, offset: bigint): Promise<void> {
  await db.query(`DELETE FROM ${DELIVERIES_TABLE} WHERE group_id = $1 AND topic = $2 AND partition = $3 AND "offset" < $4`, [groupId, topic, partition, String(offset)]);
}
