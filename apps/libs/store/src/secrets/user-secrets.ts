/**
 * Users' secrets (`POST/GET/DELETE /secrets`): named values a user's crawls refer to as
 * `{ "secret": "<name>" }` — a password for a login, a proxy's credentials, an API key sent as a
 * header. Kept in `user_secrets` (config migration 9), sealed (secret-box.ts) with the owner and the
 * name as context, so a value copied into another user's row, or under another name, does not open.
 *
 * Write-only: nothing here returns a value to a caller but `resolveUserSecrets`, which the API and the
 * dispatcher use to seal a value into a job's spec (seal-credentials.ts); listing gives names and
 * times. A secret is always looked up by its owner's id, so another user's name is simply unknown.
 */
import type { Pool, PoolClient } from '../pool.ts';
import type { SecretBox } from './secret-box.ts';

/** What `GET /secrets` shows of a secret: never its value. */
export interface UserSecretView {
  readonly name: string;
  readonly created_at: string;
  readonly updated_at: string;
}

/** The limits on a user's secrets (TRAWL_SECRETS_MAX_PER_USER, TRAWL_SECRETS_MAX_VALUE_BYTES). */
export interface UserSecretLimits {
  /** Secrets one user may keep. */
  readonly maxPerUser: number;
  /** Bytes (UTF-8) of one value. */
  readonly maxValueBytes: number;
}

export const DEFAULT_USER_SECRET_LIMITS: UserSecretLimits = Object.freeze({ maxPerUser: 100, maxValueBytes: 8 * 1024 });

/** A secret's name: like the ids users choose (websites, targets), shorter. */
export const SECRET_NAME_PATTERN = '^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$';

export function userSecretLimitsFromEnv(env: NodeJS.ProcessEnv = process.env): UserSecretLimits {
  const int = (name: string, fallback: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a positive integer, not ${JSON.stringify(raw)}`);
    return n;
  };
  return {
    maxPerUser: int('TRAWL_SECRETS_MAX_PER_USER', DEFAULT_USER_SECRET_LIMITS.maxPerUser),
    maxValueBytes: int('TRAWL_SECRETS_MAX_VALUE_BYTES', DEFAULT_USER_SECRET_LIMITS.maxValueBytes),
  };
}

/** The context a user's secret is sealed under: its owner and its name. */
export function userSecretContext(userId: string, name: string): string {
  return `user_secrets:${JSON.stringify([userId, name])}`;
}

export type PutUserSecretResult =
  | { readonly ok: true; readonly created: boolean; readonly secret: UserSecretView }
  /** The user already keeps `maxPerUser` secrets and this name is not one of them. */
  | { readonly ok: false; readonly used: number };

interface Row {
  name: string;
  created_at: Date;
  updated_at: Date;
}

function view(r: Row): UserSecretView {
  return { name: r.name, created_at: r.created_at.toISOString(), updated_at: r.updated_at.toISOString() };
}

/**
 * Creates or replaces the user's secret `name`, within `maxPerUser` (the count and the write under
 * the user's lock, so two creations at once cannot both take the last place). The caller checks the
 * value's size first.
 */
export async function putUserSecret(pool: Pool, box: SecretBox, userId: string, name: string, value: string, limits: UserSecretLimits): Promise<PutUserSecretResult> {
  const sealed = box.seal(value, userSecretContext(userId, name));
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`trawl-user-secrets:${userId}`]);
    const { rows: count } = await client.query<{ n: number; has: boolean }>(
      'SELECT count(*)::int AS n, bool_or(name = $2) AS has FROM user_secrets WHERE user_id = $1',
      [userId, name],
    );
    const { n, has } = count[0]!;
    if (!has && n >= limits.maxPerUser) {
      await client.query('ROLLBACK');
      return { ok: false, used: n };
    }
    const { rows } = await client.query<Row & { created: boolean }>(
      `INSERT INTO user_secrets (user_id, name, value) VALUES ($1, $2, $3)
       ON CONFLICT (user_id, name) DO UPDATE SET value = EXCLUDED.value, updated_at = now()
       RETURNING name, created_at, updated_at, (xmax = 0) AS created`,
      [userId, name, sealed],
    );
    await client.query('COMMIT');
    return { ok: true, created: rows[0]!.created, secret: view(rows[0]!) };
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

/** The user's secrets, by name: names and times only. */
export async function listUserSecrets(db: Pool | PoolClient, userId: string): Promise<UserSecretView[]> {
  const { rows } = await db.query<Row>('SELECT name, created_at, updated_at FROM user_secrets WHERE user_id = $1 ORDER BY name', [userId]);
  return rows.map(view);
}

/** Whether the user had a secret of that name (it is gone now). Specs already sealed with its value keep it: their jobs run as submitted. */
export async function deleteUserSecret(db: Pool | PoolClient, userId: string, name: string): Promise<boolean> {
  const { rowCount } = await db.query('DELETE FROM user_secrets WHERE user_id = $1 AND name = $2', [userId, name]);
  return (rowCount ?? 0) > 0;
}

/**
 * The clear values of the user's secrets among `names` (those the user does not have are absent):
 * only for sealing them again into a spec, in memory.
 */
export async function resolveUserSecrets(db: Pool | PoolClient, box: SecretBox, userId: string, names: readonly string[]): Promise<Map<string, string>> {
  const wanted = [...new Set(names)];
  if (wanted.length === 0) return new Map();
  const { rows } = await db.query<{ name: string; value: string }>('SELECT name, value FROM user_secrets WHERE user_id = $1 AND name = ANY($2::text[])', [userId, wanted]);
  return new Map(rows.map((r) => [r.name, box.open(r.value, userSecretContext(userId, r.name))]));
}

/** A SecretLookup (seal-credentials.ts) over the user's secrets. */
export function userSecretLookup(db: Pool | PoolClient, box: SecretBox, userId: string): (names: readonly string[]) => Promise<Map<string, string>> {
  return (names) => resolveUserSecrets(db, box, userId, names);
}

/**
 * Brings every user secret sealed under an old key to the current one (TRAWL_SECRETS_OLD_KEYS), in
 * batches under an advisory lock, as resealWebhookSecrets does for webhooks; run at the API's start.
 * Returns how many were moved.
 */
export async function resealUserSecrets(pool: Pool, box: SecretBox): Promise<number> {
  let moved = 0;
  for (;;) {
    const client = await pool.connect();
    let done = 0;
    try {
      await client.query('BEGIN');
      await client.query("SELECT pg_advisory_xact_lock(hashtext('trawl-secrets:user_secrets'))");
      const { rows } = await client.query<{ user_id: string; name: string; value: string }>(
        'SELECT user_id, name, value FROM user_secrets WHERE value NOT LIKE $1 ORDER BY user_id, name LIMIT 500 FOR UPDATE',
        [`tsec1.${box.currentKeyId}.%`],
      );
      for (const r of rows) {
        const context = userSecretContext(r.user_id, r.name);
        await client.query('UPDATE user_secrets SET value = $3 WHERE user_id = $1 AND name = $2', [r.user_id, r.name, box.seal(box.open(r.value, context), context)]);
      }
      await client.query('COMMIT');
      done = rows.length;
      moved += done;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
    if (done < 500) return moved;
  }
}
