/**
 * A deliberately small migration runner: each owner (an app, a projection) has a named, ordered
 * list of SQL steps; applied steps are recorded in `schema_migrations`. An advisory lock per owner
 * makes concurrent starts of several replicas safe, and one more the creation of the shared table
 * by several services starting at once.
 */
import type pg from 'pg';

export interface Migration {
  readonly id: number;
  readonly description: string;
  readonly sql: string;
}

export async function migrate(pool: pg.Pool, owner: string, migrations: readonly Migration[]): Promise<number[]> {
  const client = await pool.connect();
  try {
    // A migration may build an index over a large table, and a replica waits here for another's
    // migration to finish: the pool's statement timeout is for requests and ticks, not for this.
    await client.query('SET statement_timeout = 0');
    await client.query('SELECT pg_advisory_lock(hashtext($1))', [`trawl-migrate:${owner}`]);
    // The owners' locks differ, and two CREATE TABLE IF NOT EXISTS at once can both pass the check
    // (the loser fails on pg_type's unique index): services starting together on a fresh database
    // create the shared table one at a time. One simple query is one implicit transaction, so the
    // lock is held for this step only.
    await client.query(`SELECT pg_advisory_xact_lock(hashtext('trawl-migrate:schema_migrations'));
      CREATE TABLE IF NOT EXISTS schema_migrations (
        owner text NOT NULL, id int NOT NULL, description text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (owner, id))`);
    const { rows } = await client.query<{ id: number }>('SELECT id FROM schema_migrations WHERE owner = $1', [owner]);
    const done = new Set(rows.map((r) => r.id));
    const applied: number[] = [];
    for (const m of [...migrations].sort((a, b) => a.id - b.id)) {
      if (done.has(m.id)) continue;
      await client.query('BEGIN');
      try {
        await client.query(m.sql);
        await client.query('INSERT INTO schema_migrations (owner, id, description) VALUES ($1, $2, $3)', [owner, m.id, m.description]);
        await client.query('COMMIT');
        applied.push(m.id);
      } catch (err) {
        await client.query('ROLLBACK');
        throw new Error(`migration ${owner}#${m.id} (${m.description}) failed: ${(err as Error).message}`, { cause: err });
      }
    }
    return applied;
  } finally {
    await client.query('SELECT pg_advisory_unlock(hashtext($1))', [`trawl-migrate:${owner}`]).catch(() => undefined);
    await client.query('RESET statement_timeout').catch(() => undefined);
    client.release();
  }
}
