/**
 * A connection that dies while a transaction waits between two statements (the frontier awaits
 * Kafka inside its transaction): the transaction fails like any other — the projection retries it
 * — instead of the dead client's 'error' event ending the process as an uncaught exception.
 */
import { describe, expect, it } from 'vitest';
import pg from 'pg';
import { endpoints } from '@trawl/streams';
import { requireStack, startTcpProxy } from '@trawl/streams/testing';
import { inTransaction } from '../src/projection/pg-transaction.ts';

describe('inTransaction', () => {
  it('fails, and does not crash the process, when its connection dies between two statements', async () => {
    await requireStack({ kafka: false, registry: false, postgres: true });
    const url = new URL(endpoints().databaseUrl);
    const proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port || 5432) });
    url.host = `127.0.0.1:${proxy.port}`;
    const pool = new pg.Pool({ connectionString: url.toString(), max: 2, connectionTimeoutMillis: 1_000 });
    pool.on('error', () => {});
    const uncaught: unknown[] = [];
    const onUncaught = (err: unknown) => uncaught.push(err);
    // Vitest reports an uncaught exception as a failure of its own; this records it as well, to say which.
    process.on('uncaughtException', onUncaught);
    try {
      const run = inTransaction(pool, async (tx) => {
        await tx.query('SELECT 1');
        await proxy.cut(); // the connection dies while the transaction waits for something else
        await new Promise((r) => setTimeout(r, 300));
        await tx.query('SELECT 2');
      });
      await expect(run).rejects.toThrow();
      await new Promise((r) => setTimeout(r, 200));
      expect(uncaught).toEqual([]);
      // The pool hands out no broken client afterwards.
      await proxy.restore();
      expect((await pool.query<{ n: number }>('SELECT 3 AS n')).rows[0]!.n).toBe(3);
    } finally {
      process.removeListener('uncaughtException', onUncaught);
      await pool.end().catch(() => undefined);
      await proxy.close();
    }
  });
});
