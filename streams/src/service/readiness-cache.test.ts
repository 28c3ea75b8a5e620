import { describe, expect, it } from 'vitest';
import type { ReadinessChecks } from './readiness.ts';
import { DEFAULT_READY_CACHE_MS, ReadinessCache, readyCacheMsFromEnv } from './readiness-cache.ts';

/** Checks that count how often each dependency is asked, and answer when told to. */
function countedChecks() {
  let calls = 0;
  let release: (() => void) | undefined;
  let gate: Promise<void> | undefined;
  const checks: ReadinessChecks = {
    postgres: async () => {
      calls++;
      await gate;
    },
  };
  return {
    checks,
    calls: () => calls,
    hold() {
      gate = new Promise<void>((r) => (release = r));
    },
    release() {
      gate = undefined;
      release?.();
    },
  };
}

describe('ReadinessCache', () => {
  it('concurrent callers share one round in flight: N calls, one backend check', async () => {
    const c = countedChecks();
    const cache = new ReadinessCache(() => c.checks, { ttlMs: 0 });
    c.hold();
    const answers = Array.from({ length: 50 }, () => cache.results());
    await Promise.resolve();
    c.release();
    const results = await Promise.all(answers);
    expect(c.calls()).toBe(1);
    expect(new Set(results).size).toBe(1);
    expect(results[0]).toMatchObject({ postgres: { ok: true } });
  });

  it("keeps a round's result for ttlMs from when it finished, then runs a new one", async () => {
    const c = countedChecks();
    let now = 1_000;
    const cache = new ReadinessCache(() => c.checks, { ttlMs: 2_000, now: () => now });
    await cache.results();
    now += 1_999;
    for (let i = 0; i < 10; i++) await cache.results();
    expect(c.calls()).toBe(1);
    now += 1;
    await cache.results();
    expect(c.calls()).toBe(2);
  });

  it('keeps a failure as long as a success, so a dependency that is down is not hammered', async () => {
    let calls = 0;
    let now = 0;
    const checks: ReadinessChecks = {
      clickhouse: async () => {
        calls++;
        throw new Error('connect ECONNREFUSED');
      },
    };
    const failing = new ReadinessCache(() => checks, { ttlMs: 2_000, now: () => now });
    expect((await failing.results()).clickhouse).toMatchObject({ ok: false, error: 'connect ECONNREFUSED' });
    await failing.results();
    expect(calls).toBe(1);
    now += 2_000;
    await failing.results();
    expect(calls).toBe(2);
  });

  it('with ttlMs 0 every call after a round has finished runs a new one', async () => {
    const c = countedChecks();
    const cache = new ReadinessCache(() => c.checks, { ttlMs: 0 });
    await cache.results();
    await cache.results();
    expect(c.calls()).toBe(2);
  });

  it('reads TRAWL_READY_CACHE_MS: default 2 000, 0 allowed, nonsense refused', () => {
    expect(readyCacheMsFromEnv({})).toBe(DEFAULT_READY_CACHE_MS);
    expect(DEFAULT_READY_CACHE_MS).toBe(2_000);
    expect(readyCacheMsFromEnv({ TRAWL_READY_CACHE_MS: '0' })).toBe(0);
    expect(readyCacheMsFromEnv({ TRAWL_READY_CACHE_MS: '500' })).toBe(500);
    expect(() => readyCacheMsFromEnv({ TRAWL_READY_CACHE_MS: '-1' })).toThrow(/TRAWL_READY_CACHE_MS/);
    expect(() => readyCacheMsFromEnv({ TRAWL_READY_CACHE_MS: 'soon' })).toThrow(/TRAWL_READY_CACHE_MS/);
  });
});
