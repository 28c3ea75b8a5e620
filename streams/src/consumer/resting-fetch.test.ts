import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { RestingFetch, restSettings } from './resting-fetch.ts';

const require = createRequire(import.meta.url);

describe('RestingFetch', () => {
  const clock = () => {
    let t = 0;
    return { now: () => t, advance: (ms: number) => (t += ms) };
  };

  it('keeps the busy wait and bytes after work, then waits longer for any byte as the quiet lasts', () => {
    const c = clock();
    const pace = new RestingFetch({ busyWaitMs: 50, minBytes: 64 * 1024, restMaxMs: 5_000, restAfterMs: 2_000, now: c.now });
    expect([+pace.maxWaitTimeInMs, +pace.minBytes]).toEqual([50, 64 * 1024]);
    c.advance(1_999);
    expect([+pace.maxWaitTimeInMs, +pace.minBytes]).toEqual([50, 64 * 1024]);
    c.advance(1);
    expect([+pace.maxWaitTimeInMs, +pace.minBytes]).toEqual([500, 1]);
    c.advance(6_000);
    expect(+pace.maxWaitTimeInMs).toBe(2_000);
    c.advance(60_000);
    expect(+pace.maxWaitTimeInMs).toBe(5_000);
    pace.wake();
    expect([+pace.maxWaitTimeInMs, +pace.minBytes]).toEqual([50, 64 * 1024]);
  });

  it('never rests while held (a paused partition, running work), and counts the quiet from the hold', () => {
    const c = clock();
    let held = true;
    const pace = new RestingFetch({ busyWaitMs: 500, minBytes: 1, restMaxMs: 5_000, restAfterMs: 2_000, hold: () => held, now: c.now });
    c.advance(30_000);
    expect(+pace.maxWaitTimeInMs).toBe(500);
    held = false;
    c.advance(1_000);
    expect(+pace.maxWaitTimeInMs).toBe(500);
    c.advance(19_000);
    expect(+pace.maxWaitTimeInMs).toBe(5_000);
  });

  it('ends a rest no later than a paused partition may resume', () => {
    const c = clock();
    let resumes: number | undefined = 1_200;
    const pace = new RestingFetch({ busyWaitMs: 500, minBytes: 1, restMaxMs: 5_000, restAfterMs: 2_000, resumesWithinMs: () => resumes, now: c.now });
    c.advance(60_000);
    expect(+pace.maxWaitTimeInMs).toBe(1_200);
    resumes = 100;
    expect(+pace.maxWaitTimeInMs).toBe(500);
    resumes = undefined;
    expect(+pace.maxWaitTimeInMs).toBe(5_000);
  });

  it('is off when the longest rest is not above the busy wait', () => {
    const c = clock();
    const pace = new RestingFetch({ busyWaitMs: 500, minBytes: 64, restMaxMs: 0, restAfterMs: 0, now: c.now });
    c.advance(60_000);
    expect([+pace.maxWaitTimeInMs, +pace.minBytes]).toEqual([500, 64]);
  });

  it('caps the rest at a quarter of the session timeout, and reads the environment', () => {
    expect(restSettings(30_000, {})).toEqual({ restMaxMs: 5_000, restAfterMs: 2_000 });
    expect(restSettings(6_000, {})).toEqual({ restMaxMs: 1_500, restAfterMs: 2_000 });
    expect(restSettings(30_000, { TRAWL_FETCH_REST_MAX_MS: '0', TRAWL_FETCH_REST_AFTER_MS: '500' })).toEqual({ restMaxMs: 0, restAfterMs: 500 });
    expect(() => restSettings(30_000, { TRAWL_FETCH_REST_MAX_MS: 'soon' })).toThrow(/TRAWL_FETCH_REST_MAX_MS/);
  });

  it('is read afresh by kafkajs at each fetch: the request, its timeout and the sleep without partitions', async () => {
    const c = clock();
    const pace = new RestingFetch({ busyWaitMs: 50, minBytes: 64 * 1024, restMaxMs: 5_000, restAfterMs: 2_000, now: c.now });
    const fetch = require('kafkajs/src/protocol/requests/fetch/index.js') as { protocol(o: { version: number }): (o: object) => { request: { encode(): Promise<{ buffer: Buffer }> }; requestTimeout: number } };
    const build = () => fetch.protocol({ version: 11 })({ replicaId: -1, maxWaitTime: pace.maxWaitTimeInMs, minBytes: pace.minBytes, maxBytes: 1024, topics: [], isolationLevel: 1, rackId: '' });
    const busy = build();
    const b = (await busy.request.encode()).buffer;
    c.advance(20_000);
    const resting = build();
    const r = (await resting.request.encode()).buffer;
    // replicaId (4 bytes), maxWaitTime (4), minBytes (4).
    expect([b.readInt32BE(4), b.readInt32BE(8)]).toEqual([50, 64 * 1024]);
    expect([r.readInt32BE(4), r.readInt32BE(8)]).toEqual([5_000, 1]);
    expect([busy.requestTimeout, resting.requestTimeout]).toEqual([150, 5_100]);
    // kafkajs sleeps `maxWaitTime` when it has no partition to fetch: setTimeout takes the object's number.
    c.advance(-20_000);
    const started = performance.now();
    await new Promise((resolve) => setTimeout(resolve, pace.maxWaitTimeInMs as unknown as number));
    expect(performance.now() - started).toBeGreaterThanOrEqual(45);
  });
});
