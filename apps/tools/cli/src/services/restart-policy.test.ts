import { describe, expect, it } from 'vitest';
import { RestartPolicy } from './restart-policy.ts';

describe('restart policy', () => {
  it('restarts after a second, doubling while the service keeps dying young, up to a minute', () => {
    const p = new RestartPolicy();
    expect([1, 2, 3, 4, 5, 6, 7, 8].map(() => p.next(500))).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000]);
  });

  it('starts over after a good run', () => {
    const p = new RestartPolicy({ initialMs: 100, maxMs: 1_000, stableMs: 10_000 });
    expect([p.next(5), p.next(5), p.next(5)]).toEqual([100, 200, 400]);
    expect(p.next(10_000)).toBe(100);
    expect(p.next(9_999)).toBe(200);
  });
});
