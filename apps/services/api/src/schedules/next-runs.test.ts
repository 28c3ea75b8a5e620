import { describe, expect, it } from 'vitest';
import { nextRuns } from './next-runs.ts';

const at = new Date('2030-01-01T00:00:00Z');

describe('next runs', () => {
  it('lists cron slots after next_due', () => {
    const runs = nextRuns({ status: 'active', next_due: at, cron: '*/10 * * * * *', interval_ms: null, time_zone: 'UTC' }, 3);
    expect(runs.map((d) => d.toISOString())).toEqual(['2030-01-01T00:00:00.000Z', '2030-01-01T00:00:10.000Z', '2030-01-01T00:00:20.000Z']);
  });

  it('lists interval slots', () => {
    expect(nextRuns({ status: 'active', next_due: at, cron: null, interval_ms: 60_000, time_zone: 'UTC' }, 2)[1]!.toISOString()).toBe('2030-01-01T00:01:00.000Z');
  });

  it('has one run for a one-shot and none when not active', () => {
    expect(nextRuns({ status: 'active', next_due: at, cron: null, interval_ms: null, time_zone: 'UTC' })).toEqual([at]);
    expect(nextRuns({ status: 'paused', next_due: at, cron: '* * * * *', interval_ms: null, time_zone: 'UTC' })).toEqual([]);
  });
});
