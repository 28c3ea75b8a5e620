/**
 * Content addresses. An object's hash is the sha-256 of its uncompressed bytes, not of the gzip
 * stored: the same page compressed by another zlib version or level gives other bytes, and would
 * then be stored twice; the uncompressed bytes are what a reader gets back, so a reader can verify
 * them against the hash. The key fans out by the hash's first two hex digits, as object stores on a
 * filesystem (S3Proxy, MinIO) hold one directory per prefix.
 */
import { createHash } from 'node:crypto';

const HASH = /^[0-9a-f]{64}$/;

export function contentHash(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

export function isContentHash(value: string): boolean {
  return HASH.test(value);
}

export function objectKey(hash: string): string {
  if (!isContentHash(hash)) throw new Error(`not a content hash: "${hash}"`);
  return `sha256/${hash.slice(0, 2)}/${hash}`;
}

/** The inverse of objectKey, for listings; undefined for a key the store did not make. */
export function hashOfKey(key: string): string | undefined {
  const m = /^sha256\/[0-9a-f]{2}\/([0-9a-f]{64})$/.exec(key);
  return m?.[1];
}
