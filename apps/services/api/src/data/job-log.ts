import type { Pool, PoolClient } from '@trawl/store';

type Db = Pool | PoolClient;

export interface LogRow {
  readonly seq: number;
  readonly ts: Date;
  readonly level: 'info' | 'warn' | 'error';
  readonly msg: string;
  readonly event: string | null;
  readonly event_id: string | null;
  readonly data: Record<string, unknown> | null;
}

/** Log lines after `afterSeq`, in order. The projector writes them gapless under the job's row lock. */
export async function logAfter(db: Db, jobId: string, afterSeq: number, limit: number): Promise<LogRow[]> {
  const { rows } = await db.query<LogRow>(
    `SELECT seq, ts, level, msg, event, event_id::text AS event_id, data FROM job_log
     WHERE job_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`,
    [jobId, afterSeq, limit],
  );
  return rows;
}
