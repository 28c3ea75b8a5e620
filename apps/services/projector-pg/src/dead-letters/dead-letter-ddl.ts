/**
 * The `dead_letters` read model: every message of the dead-letter topics, with its owner (the
 * user of the job its value names; NULL until that is known, and for ever for an undecodable one),
 * why it failed, where it came from, and its raw key, value and headers for a re-drive. Read in
 * keyset pages per user, newest first.
 *
 * Versioned like the job read models (`projection_versions`, row `dead-letters`): a projector of
 * another version refuses newer tables, and rebuilds older ones from the log — it drops them and
 * their offsets at start, so the new version's projection reads both topics again from offset 0.
 */
import type pg from 'pg';
import { ensureOffsetsTable, resetProjectionOffsets } from '@trawl/streams';
import { migrate } from '@trawl/store';
import { ProjectionVersionMismatchError } from '../errors.ts';
import { MIGRATION_OWNER, PG_MIGRATIONS } from '../migrations.ts';

export const DEAD_LETTER_PROJECTION = 'dead-letters';
/** 1 — first version. */
export const DEAD_LETTER_VERSION = 1;

/** The name the projection's offsets are stored under (`stream_offsets`), and its group's. */
export function deadLetterProjectionName(version: number = DEAD_LETTER_VERSION): string {
  return `${DEAD_LETTER_PROJECTION}-v${version}`;
}

export const DEAD_LETTERS_DDL = `
  CREATE TABLE dead_letters (
    id text PRIMARY KEY,
    source text NOT NULL CHECK (source IN ('fetch', 'events')),
    topic text NOT NULL,
    partition int NOT NULL,
    "offset" bigint NOT NULL,
    user_id text,
    job_id text,
    event text,
    url text,
    reason text,
    error_class text,
    error_code text,
    error_message text,
    attempts int,
    failed_at timestamptz NOT NULL,
    origin_topic text NOT NULL,
    origin_partition int NOT NULL,
    origin_offset bigint NOT NULL,
    key bytea,
    value bytea,
    headers jsonb NOT NULL,
    UNIQUE (topic, partition, "offset")
  );
  CREATE INDEX dead_letters_user ON dead_letters (user_id, failed_at DESC, id DESC);
  CREATE INDEX dead_letters_user_source ON dead_letters (user_id, source, failed_at DESC, id DESC);
  CREATE INDEX dead_letters_user_job ON dead_letters (user_id, job_id, failed_at DESC, id DESC);
  CREATE INDEX dead_letters_unowned ON dead_letters (job_id) WHERE user_id IS NULL AND job_id IS NOT NULL;
`;

/** Creates the table (or rebuilds an older version's) and the offsets table; refuses a newer version's. */
export async function setupDeadLetters(pool: pg.Pool): Promise<{ created: boolean }> {
  await migrate(pool, MIGRATION_OWNER, PG_MIGRATIONS);
  await ensureOffsetsTable(pool);
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query(`SELECT pg_advisory_xact_lock(hashtext('trawl:projection:dead-letters:setup'))`);
    const { rows } = await client.query<{ version: number }>('SELECT version FROM projection_versions WHERE projection = $1', [DEAD_LETTER_PROJECTION]);
    const current = rows[0]?.version;
    if (current !== undefined && current > DEAD_LETTER_VERSION) {
      throw new ProjectionVersionMismatchError(`the dead_letters table is version ${current}, newer than this projector (version ${DEAD_LETTER_VERSION}): deploy the newer projector`);
    }
    if (current === DEAD_LETTER_VERSION) {
      await client.query('COMMIT');
      return { created: false };
    }
    if (current !== undefined) await resetProjectionOffsets(client, deadLetterProjectionName(current));
    await client.query('DROP TABLE IF EXISTS dead_letters');
    await client.query(DEAD_LETTERS_DDL);
    await client.query(
      `INSERT INTO projection_versions (projection, version, built_by) VALUES ($1, $2, 'setup')
       ON CONFLICT (projection) DO UPDATE SET version = EXCLUDED.version, built_by = EXCLUDED.built_by, swapped_at = now()`,
      [DEAD_LETTER_PROJECTION, DEAD_LETTER_VERSION],
    );
    await client.query('COMMIT');
    return { created: true };
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}
