import { afterAll, describe, expect, it } from 'vitest';
import { migrate } from './migrate.ts';
import { createPool } from './pool.ts';
import { createTestDatabase, type TestDatabase } from './testing/test-database.ts';

const databases: TestDatabase[] = [];

afterAll(async () => {
  for (const db of databases) await db.drop().catch(() => undefined);
});

describe('migrate', () => {
  it('lets several owners migrate a fresh database at the same time (services starting together)', async () => {
    // Each owner is a service of its own (its own pool) and the first to create schema_migrations;
    // concurrent CREATE TABLE IF NOT EXISTS used to fail one of them on pg_type's unique index.
    for (let round = 0; round < 8; round++) {
      const db = await createTestDatabase('trawl_migrate');
      databases.push(db);
      const owners = ['api', 'frontier', 'config', 'projection'];
      const pools = owners.map(() => createPool({ connectionString: db.url, applicationName: 'trawl-test' }));
      try {
        const results = await Promise.allSettled(
          owners.map((owner, i) => migrate(pools[i]!, owner, [{ id: 1, description: `${owner} table`, sql: `CREATE TABLE ${owner}_t (id int)` }])),
        );
        expect(results.map((r) => (r.status === 'rejected' ? String(r.reason) : 'ok'))).toEqual(owners.map(() => 'ok'));
      } finally {
        await Promise.all(pools.map((p) => p.end()));
      }
      const { rows } = await db.pool.query<{ owner: string }>('SELECT owner FROM schema_migrations ORDER BY owner');
      expect(rows.map((r) => r.owner)).toEqual([...owners].sort());
    }
  });

  it('applies each step once, however often it runs', async () => {
    const db = await createTestDatabase('trawl_migrate');
    databases.push(db);
    const steps = [
      { id: 1, description: 'a table', sql: 'CREATE TABLE once_t (id int)' },
      { id: 2, description: 'a column', sql: 'ALTER TABLE once_t ADD COLUMN name text' },
    ];
    expect(await migrate(db.pool, 'once', steps)).toEqual([1, 2]);
    expect(await migrate(db.pool, 'once', steps)).toEqual([]);
  });
});
