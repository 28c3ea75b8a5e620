import pg from 'pg';
import { endpoints } from '@trawl/streams';

/** bigint columns (offsets, counters) come back as JS numbers; Trawl's never pass 2^53. */
pg.types.setTypeParser(pg.types.builtins.INT8, (v: string) => Number(v));

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;

export interface PoolOptions {
  readonly connectionString?: string;
  readonly max?: number;
  readonly applicationName?: string;
  /** How long to wait for a connection (a new one, or a free one of the pool's `max`). Default 5 s. */
  readonly connectionTimeoutMs?: number;
}

export function createPool(options: PoolOptions = {}): pg.Pool {
  const pool = new pg.Pool({
    connectionString: options.connectionString ?? endpoints().databaseUrl,
    max: options.max ?? 10,
    application_name: options.applicationName ?? 'trawl',
    connectionTimeoutMillis: options.connectionTimeoutMs ?? 5_000,
  });
  // An idle connection that dies (Postgres restarting, a terminated backend) is dropped by the
  // pool and replaced on next use. Without a listener, node-postgres re-throws that error and the
  // whole process crashes, so a database restart would take every service down with it.
  pool.on('error', (err) => {
    process.emitWarning(`idle Postgres connection closed: ${err.message}`, { code: 'TRAWL_PG_IDLE_ERROR' });
  });
  return pool;
}

/** Runs `fn` in a transaction; rolls back on any error. */
export async function inTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}
