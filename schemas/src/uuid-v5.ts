import { createHash } from 'node:crypto';

/**
 * RFC 9562 UUIDv5 (SHA-1, name-based). Deterministic ids are what make re-emission after a crash
 * harmless: the same input gives the same id, and every consumer dedupes by it.
 */
export function uuidV5(name: string, namespace: string): string {
  const hash = createHash('sha1').update(uuidBytes(namespace)).update(name, 'utf8').digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

const namespaceCache = new Map<string, Buffer>();

function uuidBytes(uuid: string): Buffer {
  let bytes = namespaceCache.get(uuid);
  if (!bytes) {
    const hex = uuid.replace(/-/g, '');
    if (!/^[0-9a-f]{32}$/i.test(hex)) throw new TypeError(`not a UUID: ${uuid}`);
    bytes = Buffer.from(hex, 'hex');
    namespaceCache.set(uuid, bytes);
  }
  return bytes;
}
