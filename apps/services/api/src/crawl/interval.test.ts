import { describe, expect, it } from 'vitest';
import { ApiError } from '../errors.ts';
import { parseInterval } from './interval.ts';

describe('interval', () => {
  it('reads durations', () => {
    expect(parseInterval('30s')).toEqual({ cron: null, intervalMs: 30_000 });
    expect(parseInterval('15m')).toEqual({ cron: null, intervalMs: 900_000 });
    expect(parseInterval('2h')).toEqual({ cron: null, intervalMs: 7_200_000 });
    expect(parseInterval('1d')).toEqual({ cron: null, intervalMs: 86_400_000 });
  });

  it('reads 5- and 6-field cron expressions', () => {
    expect(parseInterval('*/5 * * * *')).toEqual({ cron: '*/5 * * * *', intervalMs: null });
    expect(parseInterval(' */2 * * * * * ')).toEqual({ cron: '*/2 * * * * *', intervalMs: null });
  });

  it.each(['0s', 'every minute', '* * *', '61 * * * *', '* * * * * * *', '5x', ''])('refuses %j with INVALID_CRON on field interval', (bad) => {
    try {
      parseInterval(bad);
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ApiError);
      expect((err as ApiError).code).toBe('INVALID_CRON');
      expect((err as ApiError).field).toBe('interval');
    }
  });
});
