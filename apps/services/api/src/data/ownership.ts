/**
 * Ids of websites and targets are chosen by users and global, so writes take a per-id advisory
 * lock for the transaction: two users creating the same new id at once cannot both "win" and
 * overwrite each other's row.
 */
import type { PoolClient } from '@trawl/store';

export async function lockId(tx: PoolClient, kind: 'website' | 'target', id: string): Promise<void> {
  await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`trawl-api:${kind}:${id}`]);
}

/** undefined: no such row; null: shared (no owner); else the owner. */
export async function ownerOf(tx: PoolClient, table: 'websites' | 'targets', id: string): Promise<string | null | undefined> {
  const { rows } = await tx.query<{ owner_id: string | null }>(`SELECT owner_id FROM ${table} WHERE id = $1 FOR UPDATE`, [id]);
  return rows.length === 0 ? undefined : rows[0]!.owner_id;
}
