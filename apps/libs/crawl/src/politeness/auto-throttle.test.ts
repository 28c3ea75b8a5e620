import { describe, expect, it } from 'vitest';
import { AutoThrottle, throttleBoundsOf, type ThrottleBounds } from './auto-throttle.ts';

const H = 'site.test';
const J = 'job';

/**
 * A host whose latency is `base + k × in flight` and that answers 503 above `cap` in flight, driven
 * in rounds: each round sends what the policy allows, all at once.
 */
function drive(throttle: AutoThrottle, bounds: ThrottleBounds, site: { base: number; k: number; cap: number }, rounds: number) {
  let clock = 0;
  let errors = 0;
  let sent = 0;
  for (let r = 0; r < rounds; r++) {
    const { maxConcurrency } = throttle.policy(H, J, bounds);
    const latency = site.base + site.k * maxConcurrency;
    const started = clock;
    clock += latency;
    for (let i = 0; i < maxConcurrency; i++) {
      sent++;
      const over = i >= site.cap;
      if (over) errors++;
      throttle.observe(H, J, bounds, over ? 'error' : 'ok', started, latency, clock);
    }
  }
  return { errors, sent };
}

describe('AutoThrottle', () => {
  it('moves the delay to the average of the old delay and latency / concurrency (Scrapy’s rule), rising at once', () => {
    const t = new AutoThrottle({ startDelayMs: 1000, startConcurrency: 1 });
    const bounds = { maxConcurrency: 1, minDelayMs: 0 };
    expect(t.policy(H, J, bounds).minDelayMs).toBe(1000);
    t.observe(H, J, bounds, 'ok', 0, 200);
    expect(t.policy(H, J, bounds).minDelayMs).toBe(600);
    t.observe(H, J, bounds, 'ok', 0, 200);
    expect(t.policy(H, J, bounds).minDelayMs).toBe(400);
    t.observe(H, J, bounds, 'ok', 0, 2000);
    expect(t.policy(H, J, bounds).minDelayMs).toBe(2000);
  });

  it('converges near the site’s limit and keeps errors rare', () => {
    const t = new AutoThrottle();
    const bounds = { maxConcurrency: 32, minDelayMs: 0 };
    const { errors, sent } = drive(t, bounds, { base: 50, k: 10, cap: 12 }, 300);
    const { maxConcurrency, minDelayMs } = t.policy(H, J, bounds);
    expect(maxConcurrency).toBeGreaterThanOrEqual(10);
    expect(maxConcurrency).toBeLessThanOrEqual(13);
    // latency / concurrency: about (50 + 10 × 12) / 12.
    expect(minDelayMs).toBeGreaterThan(8);
    expect(minDelayMs).toBeLessThan(25);
    expect(errors / sent).toBeLessThan(0.01);
  });

  it('backs off on an error: less concurrency, a longer delay, once per episode', () => {
    const t = new AutoThrottle({ startConcurrency: 8 });
    const bounds = { maxConcurrency: 8, minDelayMs: 0 };
    t.observe(H, J, bounds, 'ok', 0, 80, 100);
    expect(t.policy(H, J, bounds)).toEqual({ maxConcurrency: 8, minDelayMs: 10, paced: true });
    t.observe(H, J, bounds, 'error', 50, 80, 130);
    expect(t.policy(H, J, bounds)).toEqual({ maxConcurrency: 7, minDelayMs: 20, paced: true });
    // Started before that decrease: the same episode.
    t.observe(H, J, bounds, 'error', 60, 80, 140);
    expect(t.policy(H, J, bounds).maxConcurrency).toBe(7);
    // A new one: lower again, below what was in flight (3 here), not below the limit.
    t.observe(H, J, bounds, 'error', 200, 80, 280, 3);
    expect(t.policy(H, J, bounds)).toEqual({ maxConcurrency: 2, minDelayMs: 40, paced: true });
    expect(t.choice(H, J)).toMatchObject({ concurrency: 2, delayMs: 40, errors: 3 });
  });

  it('raises a limit only while it binds, and tries a level that failed only after many successes', () => {
    const t = new AutoThrottle({ startConcurrency: 4, probeAfter: 4, ceilingProbeAfter: 50 });
    const bounds = { maxConcurrency: 16, minDelayMs: 0 };
    t.observe(H, J, bounds, 'error', 0, 10, 1, 4); // 4 failed: 3, and 4 is the ceiling
    for (let i = 0; i < 20; i++) t.observe(H, J, bounds, 'ok', 10, 10, 20, 1);
    expect(t.policy(H, J, bounds).maxConcurrency, 'one in flight of three: the limit does not bind').toBe(3);
    for (let i = 0; i < 49; i++) t.observe(H, J, bounds, 'ok', 10, 10, 20, 3);
    expect(t.policy(H, J, bounds).maxConcurrency).toBe(3);
    t.observe(H, J, bounds, 'ok', 10, 10, 20, 3);
    expect(t.policy(H, J, bounds).maxConcurrency).toBe(4);
    t.observe(H, J, bounds, 'error', 30, 10, 40, 4); // failed there again: twice as long
    for (let i = 0; i < 99; i++) t.observe(H, J, bounds, 'ok', 50, 10, 60, 3);
    expect(t.policy(H, J, bounds).maxConcurrency).toBe(3);
    t.observe(H, J, bounds, 'ok', 50, 10, 60, 3);
    expect(t.policy(H, J, bounds).maxConcurrency).toBe(4);
  });

  it('never lowers the delay on an error or a non-2xx answer', () => {
    const t = new AutoThrottle({ startDelayMs: 500 });
    const bounds = { maxConcurrency: 1, minDelayMs: 0 };
    t.observe(H, J, bounds, 'neutral', 0, 10);
    expect(t.policy(H, J, bounds).minDelayMs).toBe(500);
    t.observe(H, J, bounds, 'error', 0, 10);
    expect(t.policy(H, J, bounds).minDelayMs).toBeGreaterThanOrEqual(500);
  });

  it('stays within host_concurrency and above host_delay_ms / Crawl-delay', () => {
    const t = new AutoThrottle();
    const bounds = throttleBoundsOf({ host_concurrency: 4, host_delay_ms: 100 }, 250, 2);
    expect(bounds).toEqual({ maxConcurrency: 4, minDelayMs: 250 });
    for (let i = 0; i < 100; i++) t.observe(H, J, bounds, 'ok', i, 1);
    expect(t.policy(H, J, bounds)).toEqual({ maxConcurrency: 4, minDelayMs: 250, paced: false });
    const capped = new AutoThrottle({ maxDelayMs: 1000 });
    for (let i = 0; i < 20; i++) capped.observe(H, J, bounds, 'error', i * 10_000, 30_000, i * 10_000 + 1);
    expect(capped.policy(H, J, bounds)).toEqual({ maxConcurrency: 1, minDelayMs: 1000, paced: true });
    expect(throttleBoundsOf({ host_concurrency: 0, host_delay_ms: 0 }, null, 2)).toEqual({ maxConcurrency: 2, minDelayMs: 0 });
  });

  it('keeps each job’s state on a host apart, and forgets a job', () => {
    const t = new AutoThrottle({ startConcurrency: 4 });
    const bounds = { maxConcurrency: 8, minDelayMs: 0 };
    t.observe(H, 'a', bounds, 'error', 0, 10, 1);
    expect(t.policy(H, 'a', bounds).maxConcurrency).toBe(3);
    expect(t.policy(H, 'b', bounds).maxConcurrency).toBe(4);
    t.forgetJob('a');
    expect(t.choices().map((c) => c.jobId)).toEqual(['b']);
  });
});
