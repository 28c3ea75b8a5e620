import pg from 'pg';
import { endpoints } from '@trawl/base';

/** bigint columns (offsets, counters) come back as JS numbers; Trawl's never pass 2^53. */
pg.types.setTypeParser(pg.types.builtins.INT8, (v: string) => Number(v));

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;

/**
 * `statement_timeout` of every connection a pool opens, unless its caller says otherwise: no
 * request, tick or batch of any service may hold a connection (and its locks) for ever because
 * one statement went wrong — a slow plan, a lock wait behind a stuck session, a user's query
 * that matches far more than expected. Services whose statements are long on purpose (a
 * replay's bulk settle, index builds in migrations) turn it off for those statements.
 */
export const DEFAULT_STATEMENT_TIMEOUT_MS = 30_000;

export interface PoolOptions {
  readonly connectionString?: string;
  readonly max?: number;
  readonly applicationName?: string;
  /** How long to wait for a connection (a new one, or a free one of the pool's `max`). Default 5 s. */
  readonly connectionTimeoutMs?: number;
  /**
   * Postgres cancels any statement of this pool's connections that runs longer (SQLSTATE 57014).
   * Default `TRAWL_PG_STATEMENT_TIMEOUT_MS`, else 30 s; 0 turns it off.
   */
  readonly statementTimeoutMs?: number;
}

/** The statement timeout from the environment (`TRAWL_PG_STATEMENT_TIMEOUT_MS`), else the default. */
export function statementTimeoutFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.TRAWL_PG_STATEMENT_TIMEOUT_MS;
  if (raw === undefined || raw === '') return DEFAULT_STATEMENT_TIMEOUT_MS;
  const ms = Number(raw);
  if (!Number.isInteger(ms) || ms < 0) throw new Error(`TRAWL_PG_STATEMENT_TIMEOUT_MS must be a whole number of ms ≥ 0 (0: off), got "${raw}"`);
  return ms;
}

export function createPool(options: PoolOptions = {}): pg.Pool {
  const statementTimeout = options.statementTimeoutMs ?? statementTimeoutFromEnv();
  const pool = new pg.Pool({
    connectionString: options.connectionString ?? endpoints().databaseUrl,
    max: options.max ?? 10,
    application_name: options.applicationName ?? 'trawl',
    connectionTimeoutMillis: options.connectionTimeoutMs ?? 5_000,
    // A startup parameter of each connection: it holds for every statement, in or out of a transaction.
    ...(statementTimeout > 0 ? { statement_timeout: statementTimeout } : {}),
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
