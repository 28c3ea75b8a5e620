/**
 * A throw-away database per test file on the configured Postgres server, so tests never see each
 * other's rows nor a running Trawl's, and can run again and again.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { endpoints } from '@trawl/streams';
import { createPool, type Pool } from '../pool.ts';

export interface TestDatabase {
  readonly url: string;
  readonly pool: Pool;
  drop(): Promise<void>;
}

export async function createTestDatabase(prefix = 'trawl_test'): Promise<TestDatabase> {
  const base = new URL(endpoints().databaseUrl);
  const name = `${prefix}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base.toString() });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(base.toString());
  url.pathname = `/${name}`;
  const pool = createPool({ connectionString: url.toString(), applicationName: 'trawl-test' });
  return {
    url: url.toString(),
    pool,
    async drop() {
      await pool.end();
      const c = new pg.Client({ connectionString: base.toString() });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}
