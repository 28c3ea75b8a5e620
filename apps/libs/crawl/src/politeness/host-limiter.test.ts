import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FetchAbortedError, HostBusyError } from '../errors.ts';
import { HostLimiter, type HostLimiterOptions, type Release } from './host-limiter.ts';

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

  it('lets a patient fetch (a login step) wait out the spacing instead of deferring it, but not a pause of the host', async () => {
    const limiter = new HostLimiter({ deferAfterMs: 1_000 });
    const spaced = { jobId: 'j', policy: { maxConcurrency: 1, minDelayMs: 1_500 } };
    (await limiter.acquire('a.com', spaced))();
    await expect(limiter.acquire('a.com', spaced)).rejects.toBeInstanceOf(HostBusyError);
    const controller = new AbortController();
    const patient = limiter.acquire('a.com', { ...spaced, patient: true, signal: controller.signal }).then(() => 'started', (err: unknown) => err);
    expect(limiter.stats('a.com')!.waiting).toBe(1);
    // A 10-minute pause lands while it waits: it is deferred, not left holding its caller's slot for 10 minutes.
    limiter.backoff('a.com', 600_000);
    expect(await patient).toBeInstanceOf(HostBusyError);
    expect(limiter.stats('a.com')!.waiting).toBe(0);
    await expect(limiter.acquire('a.com', { ...spaced, patient: true })).rejects.toBeInstanceOf(HostBusyError);
    // Spacing alone: it waits, until its page's budget ends it.
    (await limiter.acquire('b.com', spaced))();
    const waiting = limiter.acquire('b.com', { ...spaced, patient: true, signal: controller.signal }).then(() => 'started', (err: unknown) => err);
    expect(limiter.stats('b.com')!.waiting).toBe(1);
    controller.abort();
    expect(await waiting).toBeInstanceOf(FetchAbortedError);
  });

/**
 * Per-job politeness on a shared host, given → when → then on a fake clock (timers and Date.now
 * together): what a job asks for binds its own fetches; robots.txt, a 429 and the operator's cap
 * bind everyone's.
 */
describe("HostLimiter: a job's policy is its own, the host's rules are everyone's", () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 1_000_000 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  const limiterWith = (options: HostLimiterOptions = {}) => new HostLimiter({ ...options, now: () => Date.now() });
  const strict = { jobId: 'strict', policy: { maxConcurrency: 1, minDelayMs: 60_000 } };
  const other = { jobId: 'other', policy: { maxConcurrency: 4, minDelayMs: 0 } };

  /** What a pending acquire has come to so far: its release, its error, or nothing yet. */
  function track(acquire: Promise<Release>) {
    const t: { release?: Release; error?: unknown } = {};
    acquire.then((r) => (t.release = r), (err: unknown) => (t.error = err));
    return t;
  }
  const settle = () => vi.advanceTimersByTimeAsync(0);

  it('another job on the host is not slowed by a job asking for one request a minute', async () => {
    // given: the strict job (1 in flight, 60 s apart) has just fetched from the host
    const limiter = limiterWith({ hostMaxConcurrency: 16 });
    (await limiter.acquire('popular.com', strict))();
    // when: another job asks for 4 fetches there
    const fetches = [1, 2, 3, 4].map(() => track(limiter.acquire('popular.com', other)));
    await settle();
    // then: all four start at once, under their own policy
    expect(fetches.every((f) => f.release)).toBe(true);
    expect(limiter.stats('popular.com')).toMatchObject({ active: 4, waiting: 0, jobs: 2 });
    expect(limiter.jobStats('popular.com', 'other')).toMatchObject({ active: 4, policy: { maxConcurrency: 4, minDelayMs: 0 } });
  });

  it('the strict job is slowed: its own fetches start 60 s apart, one at a time', async () => {
    // given: the strict job's first fetch ran
    const limiter = limiterWith();
    (await limiter.acquire('popular.com', strict))();
    // when: it asks for its second
    const second = track(limiter.acquire('popular.com', strict));
    await vi.advanceTimersByTimeAsync(59_999);
    // then: not before 60 s, while the other job's fetch meanwhile starts at once
    expect(second.release).toBeUndefined();
    const meanwhile = track(limiter.acquire('popular.com', other));
    await settle();
    expect(meanwhile.release).toBeDefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(second.release).toBeDefined();
  });

  it("defers the strict job's fetch to its own due time, and leaves the other job's due times alone", async () => {
    // given: a worker that defers waits past 1 s; the strict job fetched at t0
    const limiter = limiterWith({ deferAfterMs: 1_000 });
    const t0 = Date.now();
    (await limiter.acquire('popular.com', strict))();
    // when: each job asks again
    const refused = await limiter.acquire('popular.com', strict).catch((err: unknown) => err);
    const otherFetch = await limiter.acquire('popular.com', other);
    // then: the strict one is due at t0 + 60 s; the other runs now
    expect(refused).toBeInstanceOf(HostBusyError);
    expect((refused as HostBusyError).dueAt).toBe(t0 + 60_000);
    expect((refused as HostBusyError).message).toContain('this job spaces its requests');
    otherFetch();
  });

  it('a job waiting on its own concurrency does not hold up another job queued behind it', async () => {
    // given: the strict job has one fetch in flight and one waiting for its slot (no delay now)
    const limiter = limiterWith();
    const oneAtATime = { jobId: 'one', policy: { maxConcurrency: 1, minDelayMs: 0 } };
    const running = await limiter.acquire('a.com', oneAtATime);
    const queued = track(limiter.acquire('a.com', oneAtATime));
    // when: another job's fetch arrives after it
    const later = track(limiter.acquire('a.com', other));
    await settle();
    // then: it starts; the waiting one starts when its own job's slot frees
    expect(later.release).toBeDefined();
    expect(queued.release).toBeUndefined();
    running();
    await settle();
    expect(queued.release).toBeDefined();
  });

  it("robots.txt Crawl-delay spaces every job's starts on the host", async () => {
    // given: the host's robots.txt asks 2 s between requests, and job A just fetched
    const limiter = limiterWith();
    (await limiter.acquire('a.com', { ...other, jobId: 'A', crawlDelayMs: 2_000 }))();
    // when: job B, which asks for no delay, fetches there
    const b = track(limiter.acquire('a.com', { ...other, jobId: 'B', crawlDelayMs: 2_000 }));
    await vi.advanceTimersByTimeAsync(1_999);
    // then: it waits out the Crawl-delay
    expect(b.release).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(b.release).toBeDefined();
  });

  it("a 429 pauses the host for every job", async () => {
    // given: job A got a 429 with Retry-After 30 s
    const limiter = limiterWith({ deferAfterMs: 1_000 });
    const t0 = Date.now();
    limiter.backoff('a.com', 30_000);
    // when: job B asks
    const refused = await limiter.acquire('a.com', { ...other, jobId: 'B' }).catch((err: unknown) => err);
    // then: B waits out the pause as well
    expect((refused as HostBusyError).dueAt).toBe(t0 + 30_000);
  });

  it("the operator's cap bounds all jobs together, and a freed slot goes to the job with the fewest in flight", async () => {
    // given: a cap of 2 per host, both held by a greedy job that has 3 more waiting
    const limiter = limiterWith({ hostMaxConcurrency: 2 });
    const greedy = { jobId: 'greedy', policy: { maxConcurrency: 64, minDelayMs: 0 } };
    const held = [await limiter.acquire('a.com', greedy), await limiter.acquire('a.com', greedy)];
    const greedyWaiting = [1, 2, 3].map(() => track(limiter.acquire('a.com', greedy)));
    // when: another job's fetch arrives, and one slot frees
    const small = track(limiter.acquire('a.com', { jobId: 'small' }));
    await settle();
    expect(small.release).toBeUndefined(); // the cap holds for it too
    held[0]!();
    await settle();
    // then: the small job gets it, ahead of the greedy job's backlog
    expect(small.release).toBeDefined();
    expect(greedyWaiting.filter((w) => w.release)).toHaveLength(0);
    expect(limiter.stats('a.com')).toMatchObject({ active: 2, waiting: 3 });
    expect(limiter.jobStats('a.com', 'greedy')!.policy.maxConcurrency).toBe(2); // bounded by the cap
  });

  it('bounds what a job can ask for: concurrency at hostMaxConcurrency, delay at maxDelayMs', async () => {
    const limiter = limiterWith({ hostMaxConcurrency: 4, maxDelayMs: 500 });
    (await limiter.acquire('a.com', { jobId: 'a', policy: { maxConcurrency: 64, minDelayMs: 3_600_000 } }))();
    expect(limiter.jobStats('a.com', 'a')!.policy).toEqual({ maxConcurrency: 4, minDelayMs: 500 });
  });

  it("forgets a job's state once nothing of it is in flight, waiting or promised and its spacing has passed", async () => {
    // given: a job with a 10 s delay fetched once, and ten jobs with a 1 s delay after it
    const limiter = limiterWith();
    (await limiter.acquire('a.com', { jobId: 'slow', policy: { maxConcurrency: 1, minDelayMs: 10_000 } }))();
    for (let i = 0; i < 10; i++) (await limiter.acquire('a.com', { jobId: `j${i}`, policy: { maxConcurrency: 8, minDelayMs: 1_000 } }))();
    expect(limiter.stats('a.com')!.jobs).toBe(11);
    // when: a fetch comes after 1 s, and another after 10 s
    vi.setSystemTime(Date.now() + 1_000);
    (await limiter.acquire('a.com', { jobId: 'fast' }))();
    // then: the slow job's spacing still counts (it holds the sweep: nothing is dropped before it)…
    expect(limiter.jobStats('a.com', 'slow')).not.toBeNull();
    vi.setSystemTime(Date.now() + 9_000);
    (await limiter.acquire('a.com', { jobId: 'fast' }))();
    // …and once it is over, every state that no longer matters is gone
    expect(limiter.jobStats('a.com', 'slow')).toBeNull();
    expect(limiter.stats('a.com')!.jobs).toBe(1);
  });

  it('applies a policy raised while fetches wait (the adaptive throttle) to those already waiting', async () => {
    const limiter = new HostLimiter();
    const held = await limiter.acquire('a.com', { jobId: 'j', policy: { maxConcurrency: 1 } });
    let started = 0;
    const waiting = Array.from({ length: 3 }, () => limiter.acquire('a.com', { jobId: 'j', policy: { maxConcurrency: 1 } }).then((release) => (started++, release)));
    await vi.advanceTimersByTimeAsync(5);
    expect(started).toBe(0);
    limiter.updatePolicy('a.com', 'j', { maxConcurrency: 4 });
    const releases = await Promise.all(waiting);
    expect(started).toBe(3);
    expect(limiter.jobStats('a.com', 'j')!.active).toBe(4);
    held();
    for (const r of releases) r();
  });
});
