import { describe, expect, it } from 'vitest';
import { ConsoleError } from '../errors.ts';
import { MAX_BUCKETS, resolveRange, stepFor } from './metrics-params.ts';

const now = 1_795_000_017;

describe('metrics range', () => {
  it('defaults to the last hour up to now, in whole buckets', () => {
    const r = resolveRange({}, now);
    expect(r.step).toBe(30);
    expect(r.from % r.step).toBe(0);
    expect(r.to % r.step).toBe(0);
    expect(r.from).toBeLessThanOrEqual(now - 3600);
    expect(r.to).toBeGreaterThanOrEqual(now);
    expect(r).toMatchObject({ host: '', jobId: '', limit: 20 });
  });

  it('picks the smallest step that keeps about 240 buckets', () => {
    expect(stepFor(900)).toBe(10);
    expect(stepFor(86_400)).toBe(900);
    expect(stepFor(7 * 86_400)).toBe(3600);
    expect(stepFor(31 * 86_400)).toBe(21_600);
  });

  it('refuses backwards ranges, ranges over 31 days and too many buckets, naming the field', () => {
    const fails = (q: Parameters<typeof resolveRange>[0]) => {
      try {
        resolveRange(q, now);
      } catch (err) {
        expect(err).toBeInstanceOf(ConsoleError);
        return (err as ConsoleError).field;
      }
      throw new Error('accepted');
    };
    expect(fails({ from: now, to: now - 1 })).toBe('from');
    expect(fails({ from: now - 32 * 86_400, to: now })).toBe('from');
    expect(fails({ from: now - 86_400, to: now, step: 10 })).toBe('step');
    expect(resolveRange({ from: now - MAX_BUCKETS * 60 + 60, to: now, step: 60 }, now).step).toBe(60);
  });

  it('lower-cases job ids (they are stored lower-case)', () => {
    expect(resolveRange({ job_id: 'ABCDEF01-0000-4000-8000-000000000000' }, now).jobId).toBe('abcdef01-0000-4000-8000-000000000000');
  });
});

describe('panels', () => {
  it('are the same list for the route schema and the answer', async () => {
    const { PANELS } = await import('./scrape-metrics.ts');
    const { PANEL_NAMES } = await import('./metrics-params.ts');
    expect(PANEL_NAMES.split('|')).toEqual([...PANELS]);
  });
});
