import { describe, expect, it } from 'vitest';
import type { ThrottleChoice } from './auto-throttle.ts';
import { ThrottleReports, worthReporting } from './throttle-reports.ts';

const choice = (delayMs: number, concurrency: number, host = 'shop.test', jobId = 'j1'): ThrottleChoice => ({ host, jobId, delayMs, concurrency, errors: 0 });

describe('worthReporting', () => {
  it('says a first value, any change of concurrency, and a delay moved by 25% and 20 ms', () => {
    expect(worthReporting(null, { delayMs: 0, concurrency: 1 })).toBe(true);
    expect(worthReporting({ delayMs: 100, concurrency: 2 }, { delayMs: 100, concurrency: 3 })).toBe(true);
    expect(worthReporting({ delayMs: 100, concurrency: 2 }, { delayMs: 100, concurrency: 1 })).toBe(true);
    expect(worthReporting({ delayMs: 100, concurrency: 2 }, { delayMs: 125, concurrency: 2 })).toBe(true);
    expect(worthReporting({ delayMs: 100, concurrency: 2 }, { delayMs: 75, concurrency: 2 })).toBe(true);
    expect(worthReporting({ delayMs: 100, concurrency: 2 }, { delayMs: 124, concurrency: 2 })).toBe(false);
    expect(worthReporting({ delayMs: 1000, concurrency: 2 }, { delayMs: 1200, concurrency: 2 })).toBe(false);
    // Small delays: 25% of nothing is no news, 20 ms is.
    expect(worthReporting({ delayMs: 0, concurrency: 2 }, { delayMs: 3, concurrency: 2 })).toBe(false);
    expect(worthReporting({ delayMs: 0, concurrency: 2 }, { delayMs: 20, concurrency: 2 })).toBe(true);
  });

  it('takes its margins from the options', () => {
    expect(worthReporting({ delayMs: 100, concurrency: 2 }, { delayMs: 110, concurrency: 2 }, { delayChange: 0.1, minDelayChangeMs: 5 })).toBe(true);
  });
});

describe('ThrottleReports', () => {
  it('says a host’s setting when it moved, per job and host, measured from the last one said', () => {
    const r = new ThrottleReports();
    expect(r.take(null)).toBeNull();
    expect(r.take(choice(0, 1))).toEqual({ host: 'shop.test', delay_ms: 0, concurrency: 1 });
    expect(r.take(choice(0, 1))).toBeNull();
    expect(r.take(choice(0, 2))).toEqual({ host: 'shop.test', delay_ms: 0, concurrency: 2 });
    // Creeping up by less than the margin each time: said once the sum is past it since the last said.
    expect(r.take(choice(15, 2))).toBeNull();
    expect(r.take(choice(25, 2))).toEqual({ host: 'shop.test', delay_ms: 25, concurrency: 2 });
    // Another host and another job start on their own.
    expect(r.take(choice(25, 2, 'other.test'))).not.toBeNull();
    expect(r.take(choice(25, 2, 'shop.test', 'j2'))).not.toBeNull();
  });

  it('says at most maxPerJob settings per job, then nothing until the job is forgotten', () => {
    const r = new ThrottleReports({ maxPerJob: 3 });
    const said = Array.from({ length: 10 }, (_, i) => r.take(choice(0, i + 1))).filter((x) => x !== null);
    expect(said.map((s) => s.concurrency)).toEqual([1, 2, 3]);
    expect(r.take(choice(0, 1, 'shop.test', 'j2'))).not.toBeNull();
    r.forgetJob('j1');
    expect(r.take(choice(0, 9))).toEqual({ host: 'shop.test', delay_ms: 0, concurrency: 9 });
  });

  it('remembers at most maxJobs jobs, the least recently told forgotten first', () => {
    const r = new ThrottleReports({ maxJobs: 2 });
    r.take(choice(0, 1, 'h', 'a'));
    r.take(choice(0, 1, 'h', 'b'));
    r.take(choice(0, 1, 'h', 'c'));
    // 'a' was forgotten: its setting is a first value again; 'c' is remembered.
    expect(r.take(choice(0, 1, 'h', 'c'))).toBeNull();
    expect(r.take(choice(0, 1, 'h', 'a'))).not.toBeNull();
  });
});
