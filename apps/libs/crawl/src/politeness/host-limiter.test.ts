import { describe, expect, it } from 'vitest';
import { FetchAbortedError, HostBusyError } from '../errors.ts';
import { HostLimiter } from './host-limiter.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('HostLimiter', () => {
  it('never lets more than maxConcurrency requests run on one host, and none are lost', async () => {
    const limiter = new HostLimiter({ maxConcurrency: 3 });
    let running = 0;
    let peak = 0;
    let done = 0;
    await Promise.all(
      Array.from({ length: 30 }, async () => {
        const release = await limiter.acquire('a.com');
        running++;
        peak = Math.max(peak, running);
        await sleep(2);
        running--;
        done++;
        release();
      }),
    );
    expect(peak).toBe(3);
    expect(done).toBe(30);
  });

  it('keeps hosts independent', async () => {
    const limiter = new HostLimiter({ maxConcurrency: 1 });
    const a = await limiter.acquire('a.com');
    const b = await limiter.acquire('b.com'); // not blocked by a.com
    a();
    b();
  });

  it('serves waiters in arrival order', async () => {
    const limiter = new HostLimiter({ maxConcurrency: 1 });
    const first = await limiter.acquire('a.com');
    const order: number[] = [];
    const waits = [1, 2, 3].map((n) => limiter.acquire('a.com').then((release) => (order.push(n), release())));
    first();
    await Promise.all(waits);
    expect(order).toEqual([1, 2, 3]);
  });

  it('spaces request starts by the larger of minDelay and crawl-delay', async () => {
    const limiter = new HostLimiter({ maxConcurrency: 10, minDelayMs: 20 });
    const starts: number[] = [];
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        const release = await limiter.acquire('a.com', { crawlDelayMs: 40 });
        starts.push(Date.now());
        release();
      }),
    );
    for (let i = 1; i < starts.length; i++) expect(starts[i]! - starts[i - 1]!).toBeGreaterThanOrEqual(38);
  });

  it('pauses a host after a 429 for Retry-After, other hosts unaffected', async () => {
    const limiter = new HostLimiter();
    limiter.backoff('slow.com', 1_000);
    const t0 = Date.now();
    const other = await limiter.acquire('fast.com');
    expect(Date.now() - t0).toBeLessThan(500); // at once: well before the other host's pause ends
    other();
    const release = await limiter.acquire('slow.com');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(995);
    release();
  });

  it('doubles the backoff without Retry-After and starts over after a success', () => {
    let now = 1_000;
    const limiter = new HostLimiter({ baseBackoffMs: 100, now: () => now });
    limiter.backoff('a.com', null);
    expect(limiter.stats('a.com')!.blockedForMs).toBe(100);
    now += 100;
    limiter.backoff('a.com', null);
    expect(limiter.stats('a.com')!.blockedForMs).toBe(200);
    limiter.succeeded('a.com');
    now += 200;
    limiter.backoff('a.com', null);
    expect(limiter.stats('a.com')!.blockedForMs).toBe(100);
  });

  it('caps the Crawl-delay it honours', async () => {
    const limiter = new HostLimiter({ maxDelayMs: 30 });
    const t0 = Date.now();
    (await limiter.acquire('a.com', { crawlDelayMs: 3_600_000 }))();
    (await limiter.acquire('a.com'))();
    expect(Date.now() - t0).toBeLessThan(2_000);
  });

  it('caps the pause a Retry-After can impose', () => {
    const limiter = new HostLimiter({ maxBackoffMs: 5_000 });
    limiter.backoff('a.com', 86_400_000);
    expect(limiter.stats('a.com')!.blockedForMs).toBeLessThanOrEqual(5_000);
  });

  it('drops an aborted waiter and lets the next one through', async () => {
    const limiter = new HostLimiter({ maxConcurrency: 1 });
    const held = await limiter.acquire('a.com');
    const ac = new AbortController();
    const aborted = limiter.acquire('a.com', { signal: ac.signal });
    const next = limiter.acquire('a.com');
    ac.abort();
    await expect(aborted).rejects.toBeInstanceOf(FetchAbortedError);
    expect(limiter.stats('a.com')!.waiting).toBe(1);
    held();
    (await next)();
    await expect(limiter.acquire('a.com', { signal: AbortSignal.abort() })).rejects.toBeInstanceOf(FetchAbortedError);
  });

  it('ignores a second release', async () => {
    const limiter = new HostLimiter({ maxConcurrency: 1 });
    const r = await limiter.acquire('a.com');
    r();
    r();
    expect(limiter.stats('a.com')!.active).toBe(0);
  });

  it('forgets idle hosts once maxHosts is reached, but not busy ones', async () => {
    const limiter = new HostLimiter({ maxHosts: 100 });
    const busy = await limiter.acquire('busy.com');
    for (let i = 0; i < 1000; i++) (await limiter.acquire(`h${i}.com`))();
    expect(limiter.size).toBeLessThanOrEqual(101);
    expect(limiter.stats('busy.com')!.active).toBe(1);
    busy();
  });

  it('applies the most conservative policy of the jobs on a host: the lowest concurrency and the longest delay', async () => {
    const limiter = new HostLimiter();
    const greedy = { jobId: 'a', policy: { maxConcurrency: 64, minDelayMs: 0 } };
    const polite = { jobId: 'b', policy: { maxConcurrency: 1, minDelayMs: 40 } };
    const first = await limiter.acquire('a.com', polite);
    const second = limiter.acquire('a.com', greedy); // the greedy job's policy lifts nothing
    expect(limiter.stats('a.com')).toMatchObject({ active: 1, waiting: 1, policy: { maxConcurrency: 1, minDelayMs: 40 }, jobs: 2 });
    const t0 = Date.now();
    first();
    (await second)();
    expect(Date.now() - t0).toBeGreaterThanOrEqual(30);
  });

  it('caps what a job can ask for: concurrency at hostMaxConcurrency, delay at maxDelayMs', async () => {
    const limiter = new HostLimiter({ hostMaxConcurrency: 4, maxDelayMs: 500 });
    (await limiter.acquire('a.com', { jobId: 'a', policy: { maxConcurrency: 64, minDelayMs: 3_600_000 } }))();
    expect(limiter.stats('a.com')!.policy).toEqual({ maxConcurrency: 4, minDelayMs: 500 });
  });

  it('forgets a job that has not been seen for policyTtlMs, and keeps at most maxJobsPerHost', async () => {
    let now = 1_000;
    const limiter = new HostLimiter({ policyTtlMs: 60_000, maxJobsPerHost: 3, now: () => now });
    (await limiter.acquire('a.com', { jobId: 'slow', policy: { maxConcurrency: 1, minDelayMs: 10 } }))();
    now += 61_000;
    (await limiter.acquire('a.com', { jobId: 'fast', policy: { maxConcurrency: 8, minDelayMs: 0 } }))();
    expect(limiter.stats('a.com')).toMatchObject({ policy: { maxConcurrency: 8, minDelayMs: 0 }, jobs: 1 });
    for (let i = 0; i < 10; i++) (await limiter.acquire('a.com', { jobId: `j${i}`, policy: { maxConcurrency: 8 } }))();
    expect(limiter.stats('a.com')!.jobs).toBe(3);
  });

  it('refuses a fetch that would wait past deferAfterMs with its due time, and promises deferred fetches later and later slots', async () => {
    let now = 10_000;
    const limiter = new HostLimiter({ deferAfterMs: 1_000, now: () => now });
    limiter.backoff('a.com', 600_000);
    const refused = await limiter.acquire('a.com').catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(HostBusyError);
    expect((refused as HostBusyError).dueAt).toBe(610_000);
    (await limiter.acquire('b.com'))(); // another host: at once

    const spaced = { jobId: 'j', policy: { maxConcurrency: 1, minDelayMs: 2_000 } };
    (await limiter.acquire('c.com', spaced))(); // starts now; the next may start in 2 s
    const dues: number[] = [];
    for (let i = 0; i < 3; i++) dues.push(((await limiter.acquire('c.com', spaced).catch((err: unknown) => err)) as HostBusyError).dueAt);
    expect(dues).toEqual([12_000, 14_000, 16_000]);
    now = 12_000; // the first deferred fetch comes back at its slot and runs
    (await limiter.acquire('c.com', spaced))();
  });

  it('defers the fetches already waiting on a host when a pause lands on it', async () => {
    const limiter = new HostLimiter({ deferAfterMs: 1_000 });
    const policy = { jobId: 'j', policy: { maxConcurrency: 1 } };
    const first = await limiter.acquire('a.com', policy);
    const waiting = limiter.acquire('a.com', policy).catch((err: unknown) => err);
    limiter.backoff('a.com', 600_000);
    const refused = await waiting;
    expect(refused).toBeInstanceOf(HostBusyError);
    expect((refused as HostBusyError).dueAt - Date.now()).toBeGreaterThan(590_000);
    expect(limiter.stats('a.com')!.waiting).toBe(0);
    first();
  });
});
