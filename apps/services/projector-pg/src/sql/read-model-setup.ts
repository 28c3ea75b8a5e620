/**
 * Brings a database to the point where the live projector (or the API's tests) can use it:
 * migrations, the offsets table, and the read-model tables of the running version when none
 * exist yet. Refuses to go on when the live tables belong to another version.
 */
import type pg from 'pg';
import { migrate } from '@trawl/store';
import { ensureOffsetsTable } from '@trawl/streams';
import { MIGRATION_OWNER, PG_MIGRATIONS } from '../migrations.ts';
import { PROJECTION, PROJECTION_VERSION } from '../version.ts';
import { ProjectionVersionMismatchError } from '../errors.ts';
import { readModelDdl } from './ddl.ts';
import { LIVE_TABLES } from './tables.ts';

export interface ReadModelState {
  /** Version of the live tables after setup. */
  readonly version: number;
  readonly created: boolean;
}

export async function liveVersion(db: Pick<pg.ClientBase, 'query'>): Promise<number | undefined> {
  const { rows } = await db.query<{ version: number }>('SELECT version FROM projection_versions WHERE projection = $1', [PROJECTION]);
  return rows[0]?.version;
}

export async function setupReadModels(pool: pg.Pool, { version = PROJECTION_VERSION }: { version?: number } = {}): Promise<ReadModelState> {
  await migrate(pool, MIGRATION_OWNER, PG_MIGRATIONS);
  await ensureOffsetsTable(pool);
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    // Serialises concurrent first starts: one creates the tables, the others find them.
    await client.query(`SELECT pg_advisory_xact_lock(hashtext('trawl:projection:pg:setup'))`);
    const current = await liveVersion(client);
    if (current === undefined) {
      await client.query(readModelDdl(LIVE_TABLES));
      await client.query('INSERT INTO projection_versions (projection, version, built_by) VALUES ($1, $2, $3)', [PROJECTION, version, 'setup']);
      await client.query('COMMIT');
      return { version, created: true };
    }
    await client.query('COMMIT');
    if (current !== version) {
      throw new ProjectionVersionMismatchError(
        current > version
          ? `the read models are version ${current}, newer than this projector (version ${version}): deploy the newer projector`
          : `the read models are version ${current}, this projector builds version ${version}: run \`trawl replay pg\` with this version to rebuild them, then restart`,
      );
    }
    return { version, created: false };
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}
