import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { PageFetcher } from '@trawl/crawl';
import { FetchSlots, fetchSlotsOptionsFromEnv, type FetchSlotsOptions } from './fetch-slots.ts';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const OPTIONS: FetchSlotsOptions = { perPartition: 16, perWorker: 512, browserTabs: 1, queuePerPartition: 1_000 };

/**
 * One worker's fetch slots on a fake clock: a big job keeps 500 fetches of slow hosts (2–4 s each)
 * on a partition; a small job crawls 10 pages one after another (20 ms each, a 50 ms frontier round
 * trip between two). `line` puts both jobs in one first-come line, as the consumer's offset order
 * did.
 */
async function smallCrawlMs(slots: FetchSlots, beside: 'alone' | 'big job' | 'one line'): Promise<number> {
  if (beside !== 'alone') {
    const jobId = beside === 'one line' ? 'line' : 'big';
    for (let i = 0; i < 500; i++) void slots.run({ jobId, partition: 'trawl.fetch:0' }, () => sleep(2_000 + ((i * 7_919) % 2_000)));
    await vi.advanceTimersByTimeAsync(10_000); // its fetches end spread out, as in a crawl under way
  }
  const jobId = beside === 'one line' ? 'line' : 'small';
  const t0 = Date.now();
  let done = false;
  void (async () => {
    for (let page = 0; page < 10; page++) {
      if (page > 0) await sleep(50);
      await slots.run({ jobId, partition: 'trawl.fetch:0' }, () => sleep(20));
    }
    done = true;
  })();
  while (!done) await vi.advanceTimersByTimeAsync(10);
  return Date.now() - t0;
}

describe('FetchSlots', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 1_000_000 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("a small job's crawl beside a big job's backlog of slow hosts takes less than twice its time alone", async () => {
    const alone = await smallCrawlMs(new FetchSlots(OPTIONS), 'alone');
    const beside = await smallCrawlMs(new FetchSlots(OPTIONS), 'big job');
    const inOneLine = await smallCrawlMs(new FetchSlots(OPTIONS), 'one line');
    console.info(`FETCH-SLOTS small crawl ${JSON.stringify({ aloneMs: alone, besideMs: beside, ratio: +(beside / alone).toFixed(2), oneLineMs: inOneLine })}`);
    expect(alone).toBe(650);
    expect(beside / alone).toBeLessThan(2);
    // What the consumer's order gave before: behind the backlog, 500 × ~3 s over 16 slots.
    expect(inOneLine / alone).toBeGreaterThan(50);
  });

  it("shares are per user: one user's backlog in 50 jobs leaves another user's crawl of 4 pages at a time under twice its time alone", async () => {
    // The small crawl: 10 rounds of 4 fetches at once (20 ms each), a 50 ms frontier round trip between two.
    const crawl = async (slots: FetchSlots) => {
      const t0 = Date.now();
      let done = false;
      void (async () => {
        for (let round = 0; round < 10; round++) {
          if (round > 0) await sleep(50);
          await Promise.all(Array.from({ length: 4 }, () => slots.run({ jobId: 'small', userId: 'alice', partition: 'trawl.fetch:0' }, () => sleep(20))));
        }
        done = true;
      })();
      while (!done) await vi.advanceTimersByTimeAsync(10);
      return Date.now() - t0;
    };
    // The other user's 500 slow fetches (2–4 s) in 50 jobs; `userId` undefined: each job a tenant of its own, as before.
    const beside = async (userId: string | undefined) => {
      const slots = new FetchSlots(OPTIONS);
      for (let i = 0; i < 500; i++) void slots.run({ jobId: `big-${i % 50}`, userId, partition: 'trawl.fetch:0' }, () => sleep(2_000 + ((i * 7_919) % 2_000)));
      await vi.advanceTimersByTimeAsync(10_000);
      return crawl(slots);
    };
    const alone = await crawl(new FetchSlots(OPTIONS));
    const byUser = await beside('mallory');
    const byJob = await beside(undefined);
    console.info(`FETCH-SLOTS per user ${JSON.stringify({ aloneMs: alone, besideMs: byUser, ratio: +(byUser / alone).toFixed(2), perJobMs: byJob })}`);
    expect(byUser / alone).toBeLessThan(2);
    // Per job, the 50 jobs' shares left the crawl one slot: its 4 fetches a round ran one after another.
    expect(byJob / alone).toBeGreaterThan(2);
  });

  it('a job alone uses every slot of its partition', async () => {
    const slots = new FetchSlots(OPTIONS);
    for (let i = 0; i < 100; i++) void slots.run({ jobId: 'big', partition: 'trawl.fetch:0' }, () => sleep(1_000));
    await vi.advanceTimersByTimeAsync(0);
    expect(slots.usage()).toMatchObject({ fetching: 16, waiting: 84 });
  });

  it("a partition's slots and the worker's are both shared: a job filling the worker leaves room for another on another partition", async () => {
    // given: a worker of 8 slots, filled by one job across two partitions
    const slots = new FetchSlots({ ...OPTIONS, perPartition: 8, perWorker: 8 });
    for (let i = 0; i < 40; i++) void slots.run({ jobId: 'big', partition: `trawl.fetch:${i % 2}` }, () => sleep(1_000 + i));
    await vi.advanceTimersByTimeAsync(0);
    expect(slots.usage()).toMatchObject({ fetching: 8 });
    // when: another job's fetch arrives on a third partition
    let started = 0;
    void slots.run({ jobId: 'small', partition: 'trawl.fetch:2' }, async () => void (started = Date.now()));
    const t0 = Date.now();
    await vi.advanceTimersByTimeAsync(1_000);
    // then: it takes the first worker slot that frees
    expect(started - t0).toBe(1_000);
  });

  it("the browser's tabs go round the jobs: one job's many renders do not queue ahead of another's", async () => {
    const slots = new FetchSlots(OPTIONS);
    const order: string[] = [];
    const fake = { fetch: async (url: string) => (order.push(url), await sleep(1_000), {}) };
    const browser = slots.tabbed(fake as unknown as PageFetcher);
    const page = (jobId: string, url: string) => {
      const signal = new AbortController().signal;
      return slots.run({ jobId, partition: `trawl.fetch:${url}`, signal }, () => browser.fetch(url, { signal }));
    };
    for (let i = 0; i < 5; i++) void page('big', `big${i}`);
    await vi.advanceTimersByTimeAsync(0);
    void page('small', 'small0');
    await vi.advanceTimersByTimeAsync(1_000);
    expect(order).toEqual(['big0', 'small0']);
    expect(slots.usage()).toMatchObject({ rendering: 1, waitingForTab: 4 });
  });

  it('hands the consumer every fetch it accepts on a partition, up to the queue, and never bounds it across partitions', () => {
    expect(new FetchSlots(OPTIONS).consumerLimits()).toEqual({ concurrency: 1_000, maxConcurrency: 10_000, maxBuffered: 10_000 });
  });

  it('reads its settings from the environment', () => {
    expect(fetchSlotsOptionsFromEnv({})).toEqual({ perPartition: 64, perWorker: 512, browserTabs: 2, queuePerPartition: 1_000 });
    expect(fetchSlotsOptionsFromEnv({ TRAWL_WORKER_CONCURRENCY: '2000', TRAWL_WORKER_QUEUE: '10' })).toMatchObject({ perPartition: 2_000, queuePerPartition: 2_000 });
    expect(() => fetchSlotsOptionsFromEnv({ TRAWL_WORKER_MAX_CONCURRENCY: '0' })).toThrow('TRAWL_WORKER_MAX_CONCURRENCY');
  });
});
