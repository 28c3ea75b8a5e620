import { describe, expect, it } from 'vitest';
import { FetchAbortedError } from '../errors.ts';
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
    const limiter = new HostLimiter({ maxCrawlDelayMs: 30 });
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
});
