/**
 * How the reads reach Postgres: the connection handles they take, one snapshot for a whole answer,
 * and a query's rows read through a server-side cursor, a batch at a time: Postgres orders them
 * (spilling to disk past `work_mem`), the reader holds one batch, so a reader's memory does not
 * grow with the number of rows. A cursor lives in a transaction: the caller's (`readSnapshot`).
 */
import type pg from 'pg';

/** What a read needs of a connection: a client, a pool or a snapshot's transaction. */
export type Db = Pick<pg.ClientBase, 'query'>;

export type Connect = Pick<pg.Pool, 'connect'>;

/**
 * Runs `fn` in a read-only transaction on a connection of its own, on one snapshot (repeatable
 * read), so every read of `fn` sees the read models at one moment.
 */
export async function readSnapshot<T>(pool: Connect, fn: (client: Db) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken = false;
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const out = await fn(client);
    await client.query('COMMIT');
    return out;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => (broken = true));
    throw err;
  } finally {
    client.release(broken);
  }
}

/**
 * Batches of the rows of `sql`. `batchSize` says how many rows to fetch next given the batch just
 * read (null before the first), so a reader of rows of unknown size can keep a batch's bytes
 * bounded. `name` must be an identifier unique in the transaction.
 */
export async function* cursorBatches<R extends pg.QueryResultRow>(
  client: Db,
  name: string,
  sql: string,
  params: readonly unknown[],
  batchSize: (previous: readonly R[] | null) => number,
): AsyncGenerator<R[]> {
  await client.query(`DECLARE ${name} NO SCROLL CURSOR FOR ${sql}`, [...params]);
  let previous: R[] | null = null;
  for (;;) {
    const size = Math.max(1, Math.floor(batchSize(previous)));
    const { rows } = await client.query<R>(`FETCH FORWARD ${size} FROM ${name}`);
    if (rows.length > 0) yield rows;
    if (rows.length < size) break;
    previous = rows;
  }
  await client.query(`CLOSE ${name}`);
}
