import { describe, expect, it } from 'vitest';
import { contentHash, hashOfKey, objectKey } from './content-key.ts';

describe('content addresses', () => {
  it('hash the uncompressed bytes with sha-256 and fan keys out by the first two digits', () => {
    const hash = contentHash(new TextEncoder().encode('abc'));
    expect(hash).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(objectKey(hash)).toBe(`sha256/ba/${hash}`);
    expect(hashOfKey(objectKey(hash))).toBe(hash);
  });

  it('refuse what is not a hash, so no key escapes its prefix', () => {
    expect(() => objectKey('../etc/passwd')).toThrow(/not a content hash/);
    expect(hashOfKey('other/key')).toBeUndefined();
  });
});
