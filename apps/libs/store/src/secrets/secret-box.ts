/**
 * Secrets at rest (invariant 10): what must be kept in clear somewhere to be used — a webhook's
 * signing secret, and later a user's secrets and sessions' cookies — is stored sealed with
 * AES-256-GCM under a key from configuration, never as given.
 *
 * A sealed value is `tsec1.<key id>.<iv>.<ciphertext>.<tag>` (base64url parts). The key id is a
 * fingerprint of the key (8 hex digits of a SHA-256), so keys rotate without a registry of ids: the
 * current key seals, the current and the old ones open, and a re-seal (webhook-secrets.ts) moves
 * every row to the current key, after which the old key can go. Each value is bound to where it is
 * kept (`context`, e.g. the webhook's id, as GCM's associated data): a sealed secret copied into
 * another row does not open there, so write access to a table does not turn into using another
 * tenant's secret.
 *
 * Pure: no I/O; the keys come from secrets-config.ts.
 */
import { createCipheriv, createDecipheriv, createHash, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { TrawlError } from '@trawl/schemas';

const PREFIX = 'tsec1';
const IV_BYTES = 12;
const TAG_BYTES = 16;
export const SECRETS_KEY_BYTES = 32;

/** The secrets' keys are missing or malformed: the service cannot start (an operator must fix its configuration). */
export class SecretsConfigError extends TrawlError {
  readonly code = 'TRAWL_SECRETS_CONFIG';
  readonly retriable = false;
}

/**
 * A stored secret does not open: sealed under a key that is not configured, or with the wrong key
 * or context (tampered, copied), or not sealed at all. Nothing is signed or sent with it.
 */
export class SecretUnreadableError extends TrawlError {
  readonly code = 'TRAWL_SECRET_UNREADABLE';
  readonly retriable = false;
}

/** The key id of a raw key: what a sealed value carries to say which key opens it. */
export function keyIdOf(key: Buffer): string {
  return createHash('sha256').update('trawl secrets key id\0').update(key).digest('hex').slice(0, 8);
}

/** A sealed value's shape: prefix, an 8-hex key id, then iv, ciphertext and tag in base64url. */
const SEALED = new RegExp(`^${PREFIX}\\.[0-9a-f]{8}\\.[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]*\\.[A-Za-z0-9_-]+$`);

/** The same shape, for Postgres (`secret ~ SEALED_SQL_PATTERN`). */
export const SEALED_SQL_PATTERN = SEALED.source;

/**
 * Whether a stored value is sealed (any key); a clear legacy value is not — also one a user chose
 * to begin with `tsec1.`, which a prefix alone would take for sealed (and refuse to start on).
 */
export function isSealed(value: string): boolean {
  return SEALED.test(value);
}

/** The key id a sealed value names; undefined when it is not sealed. */
export function sealedKeyId(value: string): string | undefined {
  if (!isSealed(value)) return undefined;
  return value.split('.')[1];
}

/** A key as configured: base64 (or base64url) of exactly 32 bytes. `name` is the variable, for the message. */
export function parseSecretsKey(text: string, name: string): Buffer {
  const trimmed = text.trim();
  const key = /^[A-Za-z0-9+/_-]+={0,2}$/.test(trimmed) ? Buffer.from(trimmed, trimmed.includes('-') || trimmed.includes('_') ? 'base64url' : 'base64') : Buffer.alloc(0);
  if (key.length !== SECRETS_KEY_BYTES) {
    throw new SecretsConfigError(`${name} must be ${SECRETS_KEY_BYTES} random bytes in base64 (e.g. \`openssl rand -base64 32\`); the value given is not`);
  }
  return key;
}

/** A new random key, base64: what the local stack generates. */
export function generateSecretsKey(): string {
  return randomBytes(SECRETS_KEY_BYTES).toString('base64');
}

function aad(context: string): Buffer {
  return Buffer.from(`${PREFIX}\0${context}`, 'utf8');
}

export class SecretBox {
  /** The id of the key that seals. */
  readonly currentKeyId: string;
  private readonly keys: ReadonlyMap<string, Buffer>;

  /** `current` seals and opens; each of `old` only opens (keys being rotated out). */
  constructor(current: Buffer, old: readonly Buffer[] = []) {
    if (current.length !== SECRETS_KEY_BYTES) throw new SecretsConfigError(`a secrets key must be ${SECRETS_KEY_BYTES} bytes`);
    this.currentKeyId = keyIdOf(current);
    const keys = new Map<string, Buffer>([[this.currentKeyId, current]]);
    for (const k of old) {
      if (k.length !== SECRETS_KEY_BYTES) throw new SecretsConfigError(`a secrets key must be ${SECRETS_KEY_BYTES} bytes`);
      if (!keys.has(keyIdOf(k))) keys.set(keyIdOf(k), k);
    }
    this.keys = keys;
  }

  /** Ids of every key that opens: the current one first. */
  get keyIds(): readonly string[] {
    return [...this.keys.keys()];
  }

  seal(plain: string, context: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.keys.get(this.currentKeyId)!, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(aad(context));
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return [PREFIX, this.currentKeyId, iv.toString('base64url'), body.toString('base64url'), cipher.getAuthTag().toString('base64url')].join('.');
  }

  /** The clear text of a sealed value kept under `context`; SecretUnreadableError when it does not open. */
  open(sealed: string, context: string): string {
    const parts = sealed.split('.');
    if (parts.length !== 5 || parts[0] !== PREFIX) throw new SecretUnreadableError(`the secret of ${context} is not sealed (${PREFIX}.…): was it written by hand or by an older version? Run the re-seal`);
    const [, kid, iv, body, tag] = parts as [string, string, string, string, string];
    const key = this.keys.get(kid);
    if (!key) {
      throw new SecretUnreadableError(`the secret of ${context} is sealed under key ${kid}, which is neither TRAWL_SECRETS_KEY (${this.currentKeyId}) nor in TRAWL_SECRETS_OLD_KEYS`);
    }
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'), { authTagLength: TAG_BYTES });
      decipher.setAAD(aad(context));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
    } catch (err) {
      throw new SecretUnreadableError(`the secret of ${context} does not open with key ${kid}: altered, or copied from another row`, { cause: err });
    }
  }

  /** Whether a stored value is sealed under the current key (nothing to re-seal). */
  isCurrent(value: string): boolean {
    return sealedKeyId(value) === this.currentKeyId;
  }

  /**
   * A keyed fingerprint of `text` (hex HMAC-SHA256 under a key derived from the current one for
   * `purpose`): what tells two equal credentials apart from two different ones (a dedupe key, a
   * cache key) without being a bare hash that a guess of a short password can be checked against.
   * It changes when the key rotates: what compares fingerprints then sees new ones once.
   */
  fingerprint(purpose: string, text: string): string {
    const key = Buffer.from(hkdfSync('sha256', this.keys.get(this.currentKeyId)!, Buffer.alloc(0), `trawl fingerprint\0${purpose}`, 32));
    return createHmac('sha256', key).update(text, 'utf8').digest('hex');
  }

  /** Whether a key of this box opens a value sealed under `keyId`. */
  opens(keyId: string): boolean {
    return this.keys.has(keyId);
  }
}
