import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from './migrate.ts';
import { createPool, DEFAULT_STATEMENT_TIMEOUT_MS, statementTimeoutFromEnv } from './pool.ts';
import { createTestDatabase, type TestDatabase } from './testing/test-database.ts';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('trawl_pool');
});
afterAll(async () => {
  await db?.drop();
});

describe('createPool', () => {
  it('gives every connection a statement timeout by default', async () => {
    const { rows } = await db.pool.query<{ statement_timeout: string }>('SHOW statement_timeout');
    expect(rows[0]!.statement_timeout).toBe(`${DEFAULT_STATEMENT_TIMEOUT_MS / 1000}s`);
  });

  it('cancels a statement that runs past it, and the pool goes on serving', async () => {
    const pool = createPool({ connectionString: db.url, statementTimeoutMs: 300, max: 1 });
    try {
      const started = Date.now();
      await expect(pool.query('SELECT pg_sleep(5)')).rejects.toMatchObject({ code: '57014' });
      expect(Date.now() - started).toBeLessThan(3_000);
      expect((await pool.query('SELECT 1 AS one')).rows[0].one).toBe(1);
    } finally {
      await pool.end();
    }
  });

  it('takes the timeout from TRAWL_PG_STATEMENT_TIMEOUT_MS, 0 turning it off', async () => {
    expect(statementTimeoutFromEnv({})).toBe(DEFAULT_STATEMENT_TIMEOUT_MS);
    expect(statementTimeoutFromEnv({ TRAWL_PG_STATEMENT_TIMEOUT_MS: '1500' })).toBe(1500);
    expect(() => statementTimeoutFromEnv({ TRAWL_PG_STATEMENT_TIMEOUT_MS: '-1' })).toThrow(/TRAWL_PG_STATEMENT_TIMEOUT_MS/);
    const off = createPool({ connectionString: db.url, statementTimeoutMs: 0, max: 1 });
    try {
      expect((await off.query<{ statement_timeout: string }>('SHOW statement_timeout')).rows[0]!.statement_timeout).toBe('0');
    } finally {
      await off.end();
    }
  });

  it('lets migrations run longer than the pool\'s statement timeout', async () => {
    const pool = createPool({ connectionString: db.url, statementTimeoutMs: 200, max: 1 });
    try {
      expect(await migrate(pool, 'slow', [{ id: 1, description: 'a slow step', sql: 'SELECT pg_sleep(0.6); CREATE TABLE slow_t (id int)' }])).toEqual([1]);
    } finally {
      await pool.end();
    }
  });
});
