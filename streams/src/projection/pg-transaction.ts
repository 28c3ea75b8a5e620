import type pg from 'pg';

/**
 * Runs `work` in one transaction on a pooled client. A client whose ROLLBACK fails (the
 * connection died) is destroyed rather than returned, so the pool never hands out a broken one.
 */
export async function inTransaction<T>(pool: pg.Pool, work: (tx: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let destroy: Error | undefined;
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch((rollbackErr: unknown) => {
      destroy = rollbackErr instanceof Error ? rollbackErr : new Error(String(rollbackErr));
    });
    throw err;
  } finally {
    client.release(destroy);
  }
}
