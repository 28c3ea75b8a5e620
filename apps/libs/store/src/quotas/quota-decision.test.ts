import { describe, expect, it } from 'vitest';
import { shortestGapMs } from '../schedules/cadence.ts';
import { decideInterval, decideJob, decideSchedule } from './quota-decision.ts';
import { DEFAULT_QUOTAS, quotasFromEnv } from './quota-limits.ts';

const limits = { active_jobs: 3, pages_per_day: 1000, schedules: 2, min_interval_seconds: 60, storage_bytes: 1000 };

describe('quota decisions', () => {
  it('a job starts with what it asked for while the day has room', () => {
    expect(decideJob(limits, { active_jobs: 2, pages_today: 0 }, 500)).toEqual({ ok: true, maxPages: 500, capped: false });
  });

  it('a job is capped to what is left of the day', () => {
    expect(decideJob(limits, { active_jobs: 0, pages_today: 700 }, 500)).toEqual({ ok: true, maxPages: 300, capped: true });
  });

  it('no page left: refused, naming pages_per_day', () => {
    expect(decideJob(limits, { active_jobs: 0, pages_today: 1000 }, 1)).toMatchObject({ ok: false, limit: 'pages_per_day', value: 1000, used: 1000 });
  });

  it('active jobs at the limit: refused, naming active_jobs (before pages)', () => {
    const d = decideJob(limits, { active_jobs: 3, pages_today: 5000 }, 1);
    expect(d).toMatchObject({ ok: false, limit: 'active_jobs', value: 3, used: 3 });
    expect(!d.ok && d.message).toContain('active_jobs (3)');
  });

  it('schedules: the next one past the limit is refused', () => {
    expect(decideSchedule(limits, 1)).toEqual({ ok: true });
    expect(decideSchedule(limits, 2)).toMatchObject({ ok: false, limit: 'schedules', value: 2, used: 2 });
  });

  it.each([
    [{ intervalMs: 1_000 }, true],
    [{ intervalMs: 59_999 }, true],
    [{ intervalMs: 60_000 }, false],
    [{ cron: '* * * * * *' }, true],
    [{ cron: '*/30 * * * * *' }, true],
    [{ cron: '0,59 * * * * *' }, true],
    [{ cron: '7 * * * * *' }, false],
    [{ cron: '* * * * *' }, false],
    [{ runAt: new Date() }, false],
  ])('interval %j below 60 s: %s', (cadence, refused) => {
    const refusal = decideInterval(limits, shortestGapMs(cadence));
    expect(refusal !== undefined).toBe(refused);
    if (refusal) expect(refusal).toMatchObject({ ok: false, limit: 'min_interval_seconds', value: 60 });
  });

  it('a larger minimum looks at how often a cron expression really runs', () => {
    const hourly = { ...limits, min_interval_seconds: 3600 };
    expect(decideInterval(hourly, shortestGapMs({ cron: '0 * * * *' }))).toBeUndefined();
    expect(decideInterval(hourly, shortestGapMs({ cron: '0,30 * * * *' }))).toMatchObject({ used: 1800 });
    expect(decideInterval(hourly, shortestGapMs({ cron: '0 9 * * 1-5' }))).toBeUndefined();
  });

  it('reads the defaults from the environment', () => {
    expect(quotasFromEnv({})).toEqual(DEFAULT_QUOTAS);
    expect(quotasFromEnv({ TRAWL_QUOTA_ACTIVE_JOBS: '3', TRAWL_QUOTA_MIN_INTERVAL_SECONDS: '0' })).toEqual({ ...DEFAULT_QUOTAS, active_jobs: 3, min_interval_seconds: 0 });
    expect(() => quotasFromEnv({ TRAWL_QUOTA_SCHEDULES: 'many' })).toThrow(/TRAWL_QUOTA_SCHEDULES/);
  });
});
