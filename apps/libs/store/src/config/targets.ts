import type { Pool, PoolClient } from 'pg';
import type { Target } from './types.ts';

type Db = Pool | PoolClient;

const COLUMNS = ['id', 'owner_id', 'website_id', 'name', 'url_template', 'keywords', 'location', 'active'] as const;

export async function upsertTarget(db: Db, t: Target): Promise<Target> {
  const { rows } = await db.query<Target>(
    `INSERT INTO targets (${COLUMNS.join(', ')}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
     ON CONFLICT (id) DO UPDATE SET owner_id = EXCLUDED.owner_id, website_id = EXCLUDED.website_id, name = EXCLUDED.name,
       url_template = EXCLUDED.url_template, keywords = EXCLUDED.keywords, location = EXCLUDED.location,
       active = EXCLUDED.active, updated_at = now()
     RETURNING ${COLUMNS.join(', ')}`,
    [t.id, t.owner_id, t.website_id, t.name, t.url_template, JSON.stringify(t.keywords), t.location, t.active],
  );
  return rows[0]!;
}

export async function getTarget(db: Db, id: string): Promise<Target | undefined> {
  const { rows } = await db.query<Target>(`SELECT ${COLUMNS.join(', ')} FROM targets WHERE id = $1`, [id]);
  return rows[0];
}

/** Several targets at once (one round trip), by id; unknown ids are absent. */
export async function getTargets(db: Db, ids: readonly string[]): Promise<Map<string, Target>> {
  if (ids.length === 0) return new Map();
  const { rows } = await db.query<Target>(`SELECT ${COLUMNS.join(', ')} FROM targets WHERE id = ANY($1::text[])`, [[...new Set(ids)]]);
  return new Map(rows.map((t) => [t.id, t]));
}

export async function listTargets(db: Db, ownerId: string): Promise<Target[]> {
  const { rows } = await db.query<Target>(`SELECT ${COLUMNS.join(', ')} FROM targets WHERE owner_id = $1 ORDER BY id`, [ownerId]);
  return rows;
}

export async function deleteTarget(db: Db, id: string, ownerId: string): Promise<boolean> {
  // The schedules are cancelled only when the owner's target was found (never another user's).
  const { rows } = await db.query<{ n: number }>(
    `WITH t AS (UPDATE targets SET active = false, updated_at = now() WHERE id = $1 AND owner_id = $2 RETURNING id),
          s AS (UPDATE schedules SET status = 'cancelled', updated_at = now() WHERE target_id IN (SELECT id FROM t))
     SELECT count(*)::int AS n FROM t`,
    [id, ownerId],
  );
  return rows[0]!.n > 0;
}

/** Fills `{keywords}` and `{location}` (URL-encoded) into a target's URL template. */
export function searchUrl(t: Pick<Target, 'url_template' | 'keywords' | 'location'>): string {
  return t.url_template
    .replaceAll('{keywords}', encodeURIComponent(t.keywords.join(' ')))
    .replaceAll('{location}', encodeURIComponent(t.location ?? ''));
}
