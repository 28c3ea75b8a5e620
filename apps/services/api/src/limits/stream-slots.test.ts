import { describe, expect, it } from 'vitest';
import { StreamSlots } from './stream-slots.ts';

describe('StreamSlots', () => {
  it('gives each user max slots, and a released one back once', () => {
    const slots = new StreamSlots(2);
    const a1 = slots.acquire('a')!;
    const a2 = slots.acquire('a')!;
    expect(slots.acquire('a')).toBeUndefined();
    expect(slots.acquire('b')).toBeDefined();
    a1();
    a1();
    expect(slots.count('a')).toBe(1);
    expect(slots.acquire('a')).toBeDefined();
    expect(slots.acquire('a')).toBeUndefined();
    a2();
    expect(slots.count('a')).toBe(1);
  });
});
