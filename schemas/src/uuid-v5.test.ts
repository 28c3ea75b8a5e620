import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { uuidV5 } from './uuid-v5.ts';

/** The textbook construction (RFC 9562 §5.5) with a streaming hash, to compare against. */
function reference(name: string, namespace: string): string {
  const h = createHash('sha1').update(Buffer.from(namespace.replace(/-/g, ''), 'hex')).update(name, 'utf8').digest();
  h[6] = (h[6]! & 0x0f) | 0x50;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20, 32)}`;
}

describe('uuidV5', () => {
  it('matches the RFC 9562 example (DNS namespace, www.example.com)', () => {
    expect(uuidV5('www.example.com', '6ba7b810-9dad-11d1-80b4-00c04fd430c8')).toBe('2ed6657d-e927-568b-95e1-2665a8aea6a2');
  });

  it('is deterministic and sets version 5 and the RFC variant', () => {
    const a = uuidV5('x', '6ba7b811-9dad-11d1-80b4-00c04fd430c8');
    expect(a).toBe(uuidV5('x', '6ba7b811-9dad-11d1-80b4-00c04fd430c8'));
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('hashes the name as UTF-8 (a value computed by the streaming implementation it replaced)', () => {
    expect(uuidV5('job-1\nhttps://ü.example/✓?q=1', '3f6c8f4e-2b1d-4c5a-9e7f-0d8b6a4c2e1f')).toBe('cfae904d-d22d-52b5-9045-bc649ad6af16');
  });

  it('equals the textbook construction over many names (every variant digit, non-ASCII, empty)', () => {
    const ns = '3f6c8f4e-2b1d-4c5a-9e7f-0d8b6a4c2e1f';
    const variants = new Set<string>();
    for (let i = 0; i < 2000; i++) {
      const name = i === 0 ? '' : `job-${i}\nhttps://example.com/${'ü✓\u0000'.repeat(i % 4)}${i}`;
      const id = uuidV5(name, ns);
      expect(id).toBe(reference(name, ns));
      variants.add(id[19]!);
    }
    expect([...variants].sort()).toEqual(['8', '9', 'a', 'b']);
  });

  it('refuses a namespace that is not a UUID', () => {
    expect(() => uuidV5('x', 'nope')).toThrow(TypeError);
  });
});
