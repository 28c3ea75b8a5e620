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
