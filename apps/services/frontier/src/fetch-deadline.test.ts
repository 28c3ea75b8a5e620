import { describe, expect, it } from 'vitest';
import { fetchDeadline, parseDuration } from './fetch-deadline.ts';

const TIERS = [2_000, 30_000, 300_000]; // the catalogue's default TRAWL_FETCH_RETRY_DELAYS_MS

describe('fetch deadline', () => {
  it('defaults to an hour with the default tiers, well above their retry path', () => {
    const d = fetchDeadline(TIERS, {});
    expect(d.retryPathMs).toBe(332_000 + 4 * 30_000);
    expect(d).toMatchObject({ deadlineMs: 3_600_000, sweepEveryMs: 60_000 });
  });

  it('derives the default from tiers whose path is longer than half an hour', () => {
    const d = fetchDeadline([600_000, 3_600_000], {});
    expect(d.deadlineMs).toBe(2 * (4_200_000 + 3 * 30_000));
  });

  it('refuses a deadline a retried fetch could outlive, naming both figures', () => {
    expect(() => fetchDeadline(TIERS, { TRAWL_FETCH_DEADLINE: '5m' })).toThrow(/300000 ms\) must exceed a fetch's longest retry path, 452000 ms/);
    expect(() => fetchDeadline([100, 200], { TRAWL_FETCH_DEADLINE: '3s', TRAWL_FETCH_TIMEOUT_MS: '1000' })).toThrow(/3300 ms/);
    expect(fetchDeadline([100, 200], { TRAWL_FETCH_DEADLINE: '4s', TRAWL_FETCH_TIMEOUT_MS: '1000' })).toMatchObject({ deadlineMs: 4_000, sweepEveryMs: 1_000 });
  });

  it('reads durations with or without a unit', () => {
    expect(parseDuration('X', '1500')).toBe(1_500);
    expect(parseDuration('X', '250ms')).toBe(250);
    expect(parseDuration('X', '90s')).toBe(90_000);
    expect(parseDuration('X', '1.5h')).toBe(5_400_000);
    expect(() => parseDuration('X', 'soon')).toThrow(/X must be a duration/);
    expect(() => parseDuration('X', '-5s')).toThrow(/X must be a duration/);
  });
});
