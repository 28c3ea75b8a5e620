/**
 * A counting read model for projection tests: one row per applied event (no unique key, so a
 * double application shows as a duplicate row) and a running total, both in the apply's
 * transaction.
 */
import type pg from 'pg';
import type { ApplyEvents } from '@trawl/streams';

export interface CountingModel {
  readonly table: string;
  setup(db: pg.Pool): Promise<void>;
  apply(options?: { readonly delayMs?: number }): ApplyEvents;
  counts(db: pg.Pool): Promise<{ rows: number; distinct: number; total: number }>;
  drop(db: pg.Pool): Promise<void>;
}

export function countingModel(id: string): CountingModel {
  const table = `t_${id.replace(/[^a-z0-9]/g, '_')}`;
  return {
    table,
    async setup(db) {
      await db.query(`CREATE TABLE IF NOT EXISTS ${table}_events (topic text NOT NULL, partition int NOT NULL, "offset" bigint NOT NULL, event_id text NOT NULL)`);
      await db.query(`CREATE TABLE IF NOT EXISTS ${table}_total (id int PRIMARY KEY, n bigint NOT NULL)`);
      await db.query(`INSERT INTO ${table}_total VALUES (1, 0) ON CONFLICT DO NOTHING`);
    },
    apply({ delayMs = 0 } = {}) {
      return async (events, tx) => {
        const values: unknown[] = [];
        const rows = events.map((e, i) => {
          values.push(e.topic, e.partition, e.offset, e.value.event_id);
          return `($${i * 4 + 1}, $${i * 4 + 2}, $${i * 4 + 3}, $${i * 4 + 4})`;
        });
        await tx.query(`INSERT INTO ${table}_events VALUES ${rows.join(', ')}`, values);
        await tx.query(`UPDATE ${table}_total SET n = n + $1 WHERE id = 1`, [events.length]);
        if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
      };
    },
    async counts(db) {
      const { rows } = await db.query<{ rows: string; distinct: string; total: string }>(
        `SELECT (SELECT count(*) FROM ${table}_events) AS rows,
                (SELECT count(DISTINCT (topic, partition, "offset")) FROM ${table}_events) AS distinct,
                (SELECT n FROM ${table}_total WHERE id = 1) AS total`,
      );
      const r = rows[0]!;
      return { rows: Number(r.rows), distinct: Number(r.distinct), total: Number(r.total) };
    },
    async drop(db) {
      await db.query(`DROP TABLE IF EXISTS ${table}_events, ${table}_total`);
    },
  };
}
