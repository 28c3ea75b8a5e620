import type { Pool, PoolClient } from '@trawl/store';
import { sortAt } from '../http/cursor.ts';

type Db = Pool | PoolClient;

export interface ItemRow {
  readonly item_key: string;
  readonly fetch_id: string;
  readonly url: string;
  readonly fields: Readonly<Record<string, string>>;
  readonly extracted_at: Date;
  /** Why the item fails its transforms or the website's item schema; empty when valid. */
  readonly errors: readonly string[];
  /** Keyset position (exact, with microseconds). */
  readonly sort_at: string;
}

export interface ItemQuery {
  readonly jobId: string;
  readonly limit: number;
  readonly after?: { readonly at: string; readonly id: string };
  /** false: only items with errors; true: only those without; undefined: all. */
  readonly valid?: boolean;
}

/** A job's items in extraction order, keyset-paginated on (extracted_at, item_key). */
export async function listItems(db: Db, q: ItemQuery): Promise<ItemRow[]> {
  const args: unknown[] = [q.jobId, q.limit];
  let after = '';
  if (q.after) {
    args.push(q.after.at, q.after.id);
    after = 'AND (extracted_at, item_key) > ($3::timestamptz, $4)';
  }
  const valid = q.valid === undefined ? '' : q.valid ? "AND errors = '[]'::jsonb" : "AND errors <> '[]'::jsonb";
  const { rows } = await db.query<ItemRow>(
    `SELECT item_key, fetch_id::text AS fetch_id, url, fields, extracted_at, errors, ${sortAt('extracted_at')} AS sort_at FROM job_items
     WHERE job_id = $1 ${after} ${valid} ORDER BY extracted_at, item_key LIMIT $2`,
    args,
  );
  return rows;
}

/** Every item, batch by batch, without holding a transaction or the whole result in memory. */
export async function* allItems(db: Db, jobId: string, valid?: boolean, batch = 1000): AsyncGenerator<ItemRow> {
  let after: ItemQuery['after'];
  for (;;) {
    const rows = await listItems(db, { jobId, limit: batch, ...(after ? { after } : {}), ...(valid === undefined ? {} : { valid }) });
    yield* rows;
    if (rows.length < batch) return;
    const last = rows[rows.length - 1]!;
    after = { at: last.sort_at, id: last.item_key };
  }
}

/** The union of the field names of a job's items, sorted: the CSV header. */
export async function itemFieldNames(db: Db, jobId: string): Promise<string[]> {
  const { rows } = await db.query<{ name: string }>(
    'SELECT DISTINCT jsonb_object_keys(fields) AS name FROM job_items WHERE job_id = $1 ORDER BY 1',
    [jobId],
  );
  return rows.map((r) => r.name);
}
