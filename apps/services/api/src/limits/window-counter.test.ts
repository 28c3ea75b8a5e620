import { describe, expect, it } from 'vitest';
import { clientAddressKey } from './client-address.ts';
import { WindowCounter } from './window-counter.ts';

function clock(start = 1_000_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => void (t += ms) };
}

describe('WindowCounter', () => {
  it('allows max takes per window per key, then refuses until the window restarts', () => {
    const c = clock();
    const w = new WindowCounter({ max: 3, windowMs: 1000, now: c.now });
    expect([1, 2, 3, 4].map(() => w.take('a').allowed)).toEqual([true, true, true, false]);
    expect(w.take('b').allowed).toBe(true);
    expect(w.take('a')).toEqual({ allowed: false, remaining: 0, resetAt: 1_001_000 });
    c.advance(1000);
    expect(w.take('a')).toEqual({ allowed: true, remaining: 2, resetAt: 1_002_000 });
  });

  it('a take given back is available again; never below zero', () => {
    const w = new WindowCounter({ max: 1, windowMs: 1000, now: clock().now });
    expect(w.take('a').allowed).toBe(true);
    w.give('a');
    w.give('a');
    expect(w.check('a').remaining).toBe(1);
    expect(w.take('a').allowed).toBe(true);
    expect(w.take('a').allowed).toBe(false);
  });

  it('check takes nothing', () => {
    const w = new WindowCounter({ max: 2, windowMs: 1000, now: clock().now });
    expect(w.check('a')).toMatchObject({ allowed: true, remaining: 2 });
    w.take('a');
    w.take('a');
    expect(w.check('a')).toMatchObject({ allowed: false, remaining: 0 });
  });

  it('holds at most maxKeys counters, dropping finished windows first, then the oldest', () => {
    const c = clock();
    const w = new WindowCounter({ max: 1, windowMs: 1000, maxKeys: 3, now: c.now });
    w.take('old');
    c.advance(1000);
    w.take('a');
    w.take('b');
    w.take('c');
    expect(w.size).toBe(3);
    expect(w.take('a').allowed).toBe(false);
    w.take('d');
    expect(w.size).toBe(3);
    // 'a' was the oldest still running: dropped, so it starts again.
    expect(w.take('a').allowed).toBe(true);
  });
});

describe('clientAddressKey', () => {
  it.each([
    ['203.0.113.7', '203.0.113.7'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['::ffff:cb00:7107', '203.0.113.7'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:db8:1:2:ffff::1', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['not an address', 'not an address'],
  ])('%s → %s', (ip, key) => {
    expect(clientAddressKey(ip)).toBe(key);
  });
});
