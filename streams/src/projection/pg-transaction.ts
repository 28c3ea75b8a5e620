import type pg from 'pg';

/**
 * Runs `work` in one transaction on a pooled client. A client whose ROLLBACK fails (the
 * connection died) is destroyed rather than returned, so the pool never hands out a broken one.
 *
 * While checked out, a client has no 'error' listener of the pool's: a connection that dies
 * between two statements (the frontier awaits Kafka inside its transaction) would emit 'error'
 * with nobody listening, and Node ends the process on it. The listener here takes it; the next
 * statement fails with the same cause and the transaction is retried like any other failure.
 */
export async function inTransaction<T>(pool: pg.Pool, work: (tx: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let destroy: Error | undefined;
  const broken = (err: Error) => {
    destroy ??= err;
  };
  client.on('error', broken);
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
    client.removeListener('error', broken);
    client.release(destroy);
  }
}
