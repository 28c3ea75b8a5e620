/**
 * Migrations of the `projection:pg` owner: only what outlives a rebuild. The read-model tables
 * themselves are created by setupReadModels() from the DDL of the running projection version, and
 * replaced by replay (a schema change is a version bump, not a migration).
 */
import type { Migration } from '@trawl/store';

export const MIGRATION_OWNER = 'projection:pg';

export const PG_MIGRATIONS: readonly Migration[] = [
  {
    id: 1,
    description: 'projection_versions: which version of each projection the live tables hold',
    sql: `
      CREATE TABLE IF NOT EXISTS projection_versions (
        projection text PRIMARY KEY,
        version int NOT NULL,
        built_by text NOT NULL,
        swapped_at timestamptz NOT NULL DEFAULT now()
      );
    `,
  },
];
