/**
 * Where projections keep their position: one row per (projection, topic, partition) holding the
 * next offset to apply, written in the same transaction as the read model's changes. That row,
 * not the Kafka group's commit, is the truth: a projection applies an event if and only if its
 * offset is at or past the row, and moves the row in the same commit.
 */
import { tpKey } from '../consumer/pause-control.ts';
import { createTableIfMissing, type Queryable } from '../util/pg-table.ts';

export type { Queryable } from '../util/pg-table.ts';

export const OFFSETS_TABLE = 'stream_offsets';

const CREATE_SQL = `CREATE TABLE IF NOT EXISTS ${OFFSETS_TABLE} (
  projection text NOT NULL,
  topic text NOT NULL,
  partition int NOT NULL,
  next_offset bigint NOT NULL,
  PRIMARY KEY (projection, topic, partition)
)`;

/** Creates the table if missing. Safe when several processes start together. */
export function ensureOffsetsTable(db: Queryable): Promise<void> {
  return createTableIfMissing(db, CREATE_SQL);
}

export interface StoredOffset {
  readonly topic: string;
  readonly partition: number;
  readonly nextOffset: bigint;
}

/**
 * The stored next offset (0 when the projection never applied anything of that partition),
 * creating the row at 0 when there is none; `existed` says whether there
 * was one. A row that exists means some member took the partition on before and may have died
 * applying from there: its first batch is a re-read (reread-batch.ts); the row made here makes
 * this member's first batch one for whoever comes next.
 */
export async function claimOffset(db: Queryable, projection: string, topic: string, partition: number): Promise<{ readonly nextOffset: bigint; readonly existed: boolean }> {
  const { rows } = await db.query<{ next_offset: string; existed: boolean }>(
    `WITH made AS (
       INSERT INTO ${OFFSETS_TABLE} (projection, topic, partition, next_offset) VALUES ($1, $2, $3, 0)
       ON CONFLICT (projection, topic, partition) DO NOTHING RETURNING next_offset
     )
     SELECT next_offset, false AS existed FROM made
     UNION ALL
     SELECT next_offset, true AS existed FROM ${OFFSETS_TABLE} WHERE projection = $1 AND topic = $2 AND partition = $3 AND NOT EXISTS (SELECT 1 FROM made)`,
    [projection, topic, partition],
  );
  const row = rows[0]!;
  return { nextOffset: BigInt(row.next_offset), existed: row.existed };
}

export interface PartitionRef {
  readonly topic: string;
  readonly partition: number;
}

/**
 * Inside a transaction: locks the partitions' rows (creating missing ones at 0) and returns their
 * stored offsets, one per partition, keyed by tpKey. The locks serialise two members that both
 * believe they own a partition during a rebalance; the second sees the first's offset and skips
 * what it applied. Rows are locked in (topic, partition) order, so two transactions over
 * overlapping partitions queue instead of deadlocking.
 */
export async function lockOffsets(tx: Queryable, projection: string, partitions: readonly PartitionRef[]): Promise<Map<string, StoredOffset>> {
  const refs = [...new Map(partitions.map((p) => [tpKey(p.topic, p.partition), p])).values()];
  // One round trip: the no-op update of an existing row takes its row lock as FOR UPDATE would.
  const { rows } = await tx.query<{ topic: string; partition: number; next_offset: string }>(
    `INSERT INTO ${OFFSETS_TABLE} AS o (projection, topic, partition, next_offset)
     SELECT $1, k.topic, k.partition, 0 FROM unnest($2::text[], $3::int[]) AS k(topic, partition) ORDER BY k.topic, k.partition
     ON CONFLICT (projection, topic, partition) DO UPDATE SET next_offset = o.next_offset
     RETURNING topic, partition, next_offset`,
    [projection, refs.map((r) => r.topic), refs.map((r) => r.partition)],
  );
  return new Map(rows.map((r) => [tpKey(r.topic, r.partition), { topic: r.topic, partition: r.partition, nextOffset: BigInt(r.next_offset) }]));
}

/** Moves the partitions' rows (one entry per partition) forward, never back, to the given next offsets. */
export async function saveOffsets(tx: Queryable, projection: string, offsets: readonly StoredOffset[]): Promise<void> {
  await tx.query(
    `UPDATE ${OFFSETS_TABLE} AS o SET next_offset = GREATEST(o.next_offset, k.next_offset)
       FROM unnest($2::text[], $3::int[], $4::bigint[]) AS k(topic, partition, next_offset)
      WHERE o.projection = $1 AND o.topic = k.topic AND o.partition = k.partition`,
    [projection, offsets.map((o) => o.topic), offsets.map((o) => o.partition), offsets.map((o) => String(o.nextOffset))],
  );
}

export async function readProjectionOffsets(db: Queryable, projection: string): Promise<StoredOffset[]> {
  const { rows } = await db.query<{ topic: string; partition: number; next_offset: string }>(
    `SELECT topic, partition, next_offset FROM ${OFFSETS_TABLE} WHERE projection = $1 ORDER BY topic, partition`,
    [projection],
  );
  return rows.map((r) => ({ topic: r.topic, partition: r.partition, nextOffset: BigInt(r.next_offset) }));
}

/**
 * Forgets a projection's position, so that it replays from the start of every partition. Call it
 * in the same transaction that empties the read model, with the projection stopped.
 */
export async function resetProjectionOffsets(db: Queryable, projection: string): Promise<void> {
  await db.query(`DELETE FROM ${OFFSETS_TABLE} WHERE projection = $1`, [projection]);
}
