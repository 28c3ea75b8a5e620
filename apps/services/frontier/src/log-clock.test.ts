import { describe, expect, it } from 'vitest';
import { LogClock } from './log-clock.ts';

const high = (...offsets: number[]) => new Map(offsets.map((o, p) => [p, BigInt(o)]));

describe('log clock', () => {
  it('reaches a sample once every partition has been applied up to it', () => {
    const clock = new LogClock();
    clock.record({ at: 1_000, high: high(5, 7) });
    expect(clock.caughtUpTo(high(0, 0))).toBeNull();
    expect(clock.caughtUpTo(high(5, 6))).toBeNull(); // one partition behind holds the clock back
    expect(clock.caughtUpTo(high(5, 7))).toBe(1_000);
  });

  it('takes the latest sample reached, and never goes back', () => {
    const clock = new LogClock();
    clock.record({ at: 1_000, high: high(5) });
    clock.record({ at: 2_000, high: high(9) });
    clock.record({ at: 3_000, high: high(12) });
    expect(clock.caughtUpTo(high(10))).toBe(2_000);
    expect(clock.caughtUpTo(high(10))).toBe(2_000);
    clock.record({ at: 4_000, high: high(20) });
    expect(clock.caughtUpTo(high(12))).toBe(3_000);
  });

  it('counts a partition the frontier never stored as read from 0 (an empty one is caught up)', () => {
    const clock = new LogClock();
    clock.record({ at: 1_000, high: high(0, 3) });
    expect(clock.caughtUpTo(new Map([[1, 3n]]))).toBe(1_000);
    clock.record({ at: 2_000, high: high(1, 3) });
    expect(clock.caughtUpTo(new Map([[1, 3n]]))).toBe(1_000);
  });

  it('keeps a bounded number of samples, dropping the oldest (which only delays the clock)', () => {
    const clock = new LogClock(2);
    clock.record({ at: 1_000, high: high(1) });
    clock.record({ at: 2_000, high: high(2) });
    clock.record({ at: 3_000, high: high(3) });
    expect(clock.caughtUpTo(high(1))).toBeNull();
    expect(clock.caughtUpTo(high(2))).toBe(2_000);
  });
});
