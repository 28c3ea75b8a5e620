/**
 * The consistency query: per table, a row count and an order-independent content checksum (the
 * sum of each row's md5 taken as a 64-bit number). Two table sets built from the same events
 * must give the same figures.
 *
 * job_log is compared without `seq`: a job's sequence is commit order, which legitimately
 * differs between the live projector and a replay that read the topics in another interleaving.
 * What must hold instead is checked apart: each job's seq runs 1..n without a gap.
 */
import type pg from 'pg';
import { ident, type TableSet } from './tables.ts';

export interface TableChecksum {
  readonly rows: number;
  readonly checksum: string;
}

export interface TableSetChecksum {
  readonly jobs: TableChecksum;
  readonly pages: TableChecksum;
  readonly items: TableChecksum;
  readonly log: TableChecksum;
  readonly cache: TableChecksum;
  /** Jobs whose log seq is not exactly 1..n. */
  readonly logGaps: number;
}

const rowHash = (expr: string): string => `coalesce(sum(('x' || left(md5(${expr}), 16))::bit(64)::bigint), 0)::text`;

async function one(db: Pick<pg.ClientBase, 'query'>, sql: string): Promise<TableChecksum> {
  const { rows } = await db.query<{ rows: string; checksum: string }>(sql);
  return { rows: Number(rows[0]!.rows), checksum: rows[0]!.checksum };
}

export async function tableSetChecksum(db: Pick<pg.ClientBase, 'query'>, t: TableSet): Promise<TableSetChecksum> {
  const jobs = await one(db, `SELECT count(*) AS rows, ${rowHash('r::text')} AS checksum FROM ${ident(t.jobs)} r`);
  const pages = await one(db, `SELECT count(*) AS rows, ${rowHash('r::text')} AS checksum FROM ${ident(t.pages)} r`);
  const items = await one(db, `SELECT count(*) AS rows, ${rowHash('r::text')} AS checksum FROM ${ident(t.items)} r`);
  const log = await one(
    db,
    `SELECT count(*) AS rows, ${rowHash('(r.job_id, r.ts, r.level, r.msg, r.event, r.event_id, r.data)::text')} AS checksum FROM ${ident(t.log)} r`,
  );
  const cache = await one(db, `SELECT count(*) AS rows, ${rowHash('r::text')} AS checksum FROM ${ident(t.cache)} r`);
  const gaps = await db.query<{ n: string }>(
    `SELECT count(*) AS n FROM (SELECT job_id FROM ${ident(t.log)} GROUP BY job_id HAVING min(seq) <> 1 OR max(seq) <> count(*)) g`,
  );
  return { jobs, pages, items, log, cache, logGaps: Number(gaps.rows[0]!.n) };
}

/** Names of the tables whose figures differ (empty when the sets agree). */
export function checksumDifferences(a: TableSetChecksum, b: TableSetChecksum): string[] {
  const out: string[] = [];
  for (const k of ['jobs', 'pages', 'items', 'log', 'cache'] as const) {
    if (a[k].rows !== b[k].rows || a[k].checksum !== b[k].checksum) out.push(k);
  }
  if (a.logGaps !== 0 || b.logGaps !== 0) out.push('log seq gaps');
  return out;
}
