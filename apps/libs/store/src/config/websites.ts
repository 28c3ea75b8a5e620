import type { Pool, PoolClient } from 'pg';
import type { Website } from './types.ts';

type Db = Pool | PoolClient;

const COLUMNS = [
  'id', 'owner_id', 'name', 'base_url', 'requires_browser', 'pagination_type', 'next_link_selector', 'page_param',
  'item_root', 'item_fields', 'include_patterns', 'exclude_patterns', 'same_host', 'allowed_hosts', 'max_depth',
  'max_pages', 'host_concurrency', 'host_delay_ms', 'headers', 'user_agent', 'locale', 'cookies', 'load_more_selector', 'reach',
  'item_root_xpath', 'item_schema',
] as const;
const JSON_COLUMNS = new Set(['item_fields', 'item_schema', 'include_patterns', 'exclude_patterns', 'allowed_hosts', 'headers', 'cookies', 'reach']);
/** Request and reach options a website written before them (or by code that does not set them) has: none. */
const OPTION_DEFAULTS = { headers: {}, user_agent: null, locale: null, cookies: {}, load_more_selector: null, reach: {}, item_root_xpath: null, item_schema: null } as const;

/** Inserts or replaces a website (by id). */
export async function upsertWebsite(db: Db, w: Website): Promise<Website> {
  const row = { ...OPTION_DEFAULTS, ...Object.fromEntries(Object.entries(w).filter(([, v]) => v !== undefined)) } as Website;
  const values = COLUMNS.map((c) => (JSON_COLUMNS.has(c) ? JSON.stringify(row[c]) : row[c]));
  const placeholders = COLUMNS.map((_, i) => `$${i + 1}`).join(', ');
  const updates = COLUMNS.filter((c) => c !== 'id').map((c) => `${c} = EXCLUDED.${c}`).join(', ');
  const { rows } = await db.query<Website>(
    `INSERT INTO websites (${COLUMNS.join(', ')}) VALUES (${placeholders})
     ON CONFLICT (id) DO UPDATE SET ${updates}, updated_at = now() RETURNING ${COLUMNS.join(', ')}`,
    values,
  );
  return rows[0]!;
}

export async function getWebsite(db: Db, id: string): Promise<Website | undefined> {
  const { rows } = await db.query<Website>(`SELECT ${COLUMNS.join(', ')} FROM websites WHERE id = $1`, [id]);
  return rows[0];
}

/** Several websites at once (one round trip), by id; unknown ids are absent. */
export async function getWebsites(db: Db, ids: readonly string[]): Promise<Map<string, Website>> {
  if (ids.length === 0) return new Map();
  const { rows } = await db.query<Website>(`SELECT ${COLUMNS.join(', ')} FROM websites WHERE id = ANY($1::text[])`, [[...new Set(ids)]]);
  return new Map(rows.map((w) => [w.id, w]));
}

/** Websites visible to an owner: their own and the shared ones (owner_id null). */
export async function listWebsites(db: Db, ownerId: string): Promise<Website[]> {
  const { rows } = await db.query<Website>(
    `SELECT ${COLUMNS.join(', ')} FROM websites WHERE owner_id = $1 OR owner_id IS NULL ORDER BY name`,
    [ownerId],
  );
  return rows;
}

export async function deleteWebsite(db: Db, id: string, ownerId: string): Promise<boolean> {
  const { rowCount } = await db.query('DELETE FROM websites WHERE id = $1 AND owner_id = $2', [id, ownerId]);
  return (rowCount ?? 0) > 0;
}
