/**
 * A throw-away database per test file on the configured Postgres server, so tests never see each
 * other's rows nor a running Trawl's, and can run again and again.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { endpoints } from '@trawl/base';
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
        await dropDatabase(c, name);
      } finally {
        await c.end();
      }
    },
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * FORCE ends the sessions still on the database, but only those the role may signal: one of
 * another role (42501) makes it fail. Such a session is a process's pool closing on its own
 * schedule, so a plain DROP is tried again for a while; a database still in use after that stays
 * (its name is random and `trawl_test_`-prefixed) rather than failing the tests that used it.
 */
async function dropDatabase(c: pg.Client, name: string): Promise<void> {
  try {
    await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    return;
  } catch (err) {
    if ((err as { code?: string }).code !== '42501') throw err;
  }
  for (let attempt = 0; attempt < 20; attempt++) {
    try {
      await c.query(`DROP DATABASE IF EXISTS ${name}`);
      return;
    } catch (err) {
      if ((err as { code?: string }).code !== '55006') throw err; // in use by other sessions
      await sleep(500);
    }
  }
  process.stderr.write(`test database ${name} still in use after 10 s: left in place\n`);
}
