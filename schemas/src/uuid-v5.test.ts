import { describe, expect, it } from 'vitest';
import { uuidV5 } from './uuid-v5.ts';

describe('uuidV5', () => {
  it('matches the RFC 9562 example (DNS namespace, www.example.com)', () => {
    expect(uuidV5('www.example.com', '6ba7b810-9dad-11d1-80b4-00c04fd430c8')).toBe('2ed6657d-e927-568b-95e1-2665a8aea6a2');
  });

  it('is deterministic and sets version 5 and the RFC variant', () => {
    const a = uuidV5('x', '6ba7b811-9dad-11d1-80b4-00c04fd430c8');
    expect(a).toBe(uuidV5('x', '6ba7b811-9dad-11d1-80b4-00c04fd430c8'));
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('refuses a namespace that is not a UUID', () => {
    expect(() => uuidV5('x', 'nope')).toThrow(TypeError);
  });
});
