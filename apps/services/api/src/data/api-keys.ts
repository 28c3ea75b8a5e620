/**
 * API keys: `trawl_` + 32 random bytes (base64url). Only the SHA-256 of a key is stored, so a
 * leaked table grants nothing; a plain hash (no salt, no KDF) is enough because the key has 256
 * bits of entropy, and it keeps the lookup one indexed equality per request.
 */
import { createHash, randomBytes } from 'node:crypto';
import { TrawlError } from '@trawl/schemas';
import type { Pool, PoolClient } from '@trawl/store';

type Db = Pool | PoolClient;

export const API_KEY_PREFIX = 'trawl_';
/** What a presented key must look like before we bother Postgres with it. */
export const API_KEY_PATTERN = /^trawl_[A-Za-z0-9_-]{43}$/;
/** User ids are chosen by operators (`trawl keys create <user>`); kept printable and short. */
export const USER_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.@-]{0,127}$/;

/** What a key id looks like (ids made before migration 2 were re-made in this shape). */
export const API_KEY_ID_PATTERN = /^key_[0-9a-f]{16}$/;

export function newKeyId(): string {
  return `key_${randomBytes(8).toString('hex')}`;
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

export interface CreatedApiKey {
  /** The key itself: shown once, never stored. */
  readonly key: string;
  /**
   * A short public id for listings and revocation (`key_` + 16 hex digits), random on its own:
   * it may be shown, logged and pasted anywhere, so it holds nothing of the secret.
   */
  readonly id: string;
  readonly userId: string;
}

/** A user id outside the allowed shape: the key is not created. */
export class InvalidUserIdError extends TrawlError {
  readonly code = 'TRAWL_INVALID_USER_ID';
  readonly retriable = false;
}

export async function createApiKey(db: Db, userId: string, label: string | null = null): Promise<CreatedApiKey> {
  if (!USER_ID_PATTERN.test(userId)) {
    throw new InvalidUserIdError(`user id "${userId}" must be 1-128 characters of letters, digits and _ . @ - (starting with a letter or digit)`);
  }
  const key = API_KEY_PREFIX + randomBytes(32).toString('base64url');
  const id = newKeyId();
  await db.query('INSERT INTO api_keys (id, user_id, key_hash, label) VALUES ($1, $2, $3, $4)', [id, userId, hashApiKey(key), label]);
  return { key, id, userId };
}

/** The owner of a presented key, or undefined when it is unknown or revoked. */
export async function userForApiKey(db: Db, key: string): Promise<string | undefined> {
  if (!API_KEY_PATTERN.test(key)) return undefined;
  const { rows } = await db.query<{ user_id: string }>(
    'SELECT user_id FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL',
    [hashApiKey(key)],
  );
  return rows[0]?.user_id;
}

/** A key as the in-memory index holds it (auth/key-index.ts): its hash and owner, never the key. */
export interface IndexedKey {
  readonly hash: string;
  readonly userId: string;
}

/**
 * The active keys whose hash starts with `prefix` (one hex digit) and sorts after `after`, in hash
 * order, at most `limit`: one page of the index's resync, a range walk of `api_keys`' unique index.
 * The range is `[prefix, next digit)`; hashes are lowercase hex, which every collation orders as
 * C does, so the ranges of the 16 digits cover the table once.
 */
export async function activeKeysPage(db: Db, prefix: string, after: string | null, limit: number): Promise<IndexedKey[]> {
  const upper = prefix === '9' ? 'a' : prefix === 'f' ? 'g' : String.fromCharCode(prefix.charCodeAt(0) + 1);
  const { rows } = await db.query<{ key_hash: string; user_id: string }>(
    `SELECT key_hash, user_id FROM api_keys
      WHERE key_hash ${after === null ? '>=' : '>'} $1 AND key_hash < $2 AND revoked_at IS NULL
      ORDER BY key_hash LIMIT $3`,
    [after ?? prefix, upper, limit],
  );
  return rows.map((r) => ({ hash: r.key_hash, userId: r.user_id }));
}

/**
 * The channel on which every change of `api_keys` is announced, by the triggers of migration 4
 * (data/migrations.ts): whoever writes the table (the API, `trawl keys`, SQL by hand) is heard.
 */
export const API_KEY_CHANNEL = 'trawl_api_keys';

/** What a notification on `API_KEY_CHANNEL` says: a key's state after the change, or that the table was emptied. */
export type ApiKeyChange =
  | { readonly kind: 'key'; readonly hash: string; readonly userId: string; readonly active: boolean }
  | { readonly kind: 'resync' };

/**
 * The change a notification's payload describes. A payload of any other shape (a newer trigger,
 * someone's hand-made NOTIFY) asks for a resync rather than being guessed at.
 */
export function parseApiKeyChange(payload: string): ApiKeyChange {
  try {
    const v = JSON.parse(payload) as { key_hash?: unknown; user_id?: unknown; active?: unknown };
    if (typeof v.key_hash === 'string' && /^[0-9a-f]{64}$/.test(v.key_hash) && typeof v.user_id === 'string' && typeof v.active === 'boolean') {
      return { kind: 'key', hash: v.key_hash, userId: v.user_id, active: v.active };
    }
  } catch {
    // Not JSON: a resync below.
  }
  return { kind: 'resync' };
}

export async function revokeApiKey(db: Db, id: string): Promise<boolean> {
  const { rowCount } = await db.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL', [id]);
  return (rowCount ?? 0) > 0;
}

/** A key as an operator lists it: never the key or its hash. */
export interface ApiKeyListing {
  readonly id: string;
  readonly user_id: string;
  readonly label: string | null;
  readonly created_at: Date;
  readonly revoked_at: Date | null;
}

/** Every key, or one user's, oldest first (revoked ones too, with when). */
export async function listApiKeys(db: Db, options: { readonly userId?: string } = {}): Promise<ApiKeyListing[]> {
  const { rows } = await db.query<ApiKeyListing>(
    `SELECT id, user_id, label, created_at, revoked_at FROM api_keys ${options.userId === undefined ? '' : 'WHERE user_id = $1'} ORDER BY created_at, id`,
    options.userId === undefined ? [] : [options.userId],
  );
  return rows;
}
