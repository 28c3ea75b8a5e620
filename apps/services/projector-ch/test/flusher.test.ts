import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { endpoints } from '@trawl/streams';
import { decoded, syntheticJob, testLogger } from '@trawl/streams/testing';
import { ClickHouse, ident } from '@trawl/clickhouse';
import { setupAnalytics } from '../src/schema/analytics-schema.ts';
import { Flusher } from '../src/projector/flusher.ts';
import { NO_SWAP_LOCK } from '../src/projector/swap-lock.ts';
import type { PositionedEvent } from '../src/model/fact-rows.ts';

function positioned(job: number): PositionedEvent[] {
  let offset = 0n;
  return syntheticJob(job, { jobs: 0, pagesPerJob: 5, seed: 3, runId: `flusher-${job}` }).map((e) => {
    const d = decoded(e);
    return { topic: 'events', partition: job, offset: offset++, name: d.name, value: d.value };
  });
}

describe('Flusher against a real ClickHouse', () => {
  let ch: ClickHouse;
  beforeAll(async () => {
    ch = new ClickHouse({ url: endpoints().clickhouseUrl, database: `trawl_test_fl_${randomBytes(4).toString('hex')}` });
    await setupAnalytics(ch);
  });
  afterAll(async () => {
    await ch.exec(`DROP DATABASE IF EXISTS ${ident(ch.database)}`, { database: null }).catch(() => undefined);
    await ch.close();
  });

  it('stores what waits once the events stop, without waiting for maxDelayMs', async () => {
    const flusher = new Flusher({ ch, lock: NO_SWAP_LOCK, logger: testLogger('flusher'), maxRows: 100_000, maxDelayMs: 60_000, quietMs: 100 });
    try {
      const started = Date.now();
      await Promise.all(positioned(1).map((e) => flusher.add(e)));
      // Without the quiet rule these promises settle after 60 s (the test would time out).
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(flusher.stats()).toMatchObject({ flushes: 1, waiting: 0 });
    } finally {
      flusher.close();
    }
  });

  it('keeps batching while events keep coming, then stores them once they stop', async () => {
    const flusher = new Flusher({ ch, lock: NO_SWAP_LOCK, logger: testLogger('flusher'), maxRows: 100_000, maxDelayMs: 60_000, quietMs: 1_000 });
    try {
      const adds: Promise<void>[] = [];
      // Jobs 4 and 11 are still running when their events stop: no end to flush on.
      const events = [...positioned(4), ...positioned(11)];
      // One event every 10 ms: never quiet for 1 s, so nothing is stored until they stop.
      for (const e of events) {
        adds.push(flusher.add(e));
        await new Promise((r) => setTimeout(r, 10));
      }
      expect(flusher.stats().flushes).toBe(0);
      await Promise.all(adds);
      expect(flusher.stats()).toMatchObject({ flushes: 1, waiting: 0, inserted: events.length });
    } finally {
      flusher.close();
    }
  });

  it('stores a job\'s events as soon as it ends, with whatever came in the same turn', async () => {
    // Quiet rule and timer out of the way: only the job's end can flush.
    const flusher = new Flusher({ ch, lock: NO_SWAP_LOCK, logger: testLogger('flusher'), maxRows: 100_000, maxDelayMs: 60_000, quietMs: 0 });
    try {
      const completed = positioned(2); // ends with JobCompleted
      const failed = positioned(5); // ends with JobFailed
      const running = positioned(18); // no end yet
      expect(completed.at(-1)!.name).toBe('JobCompleted');
      expect(failed.at(-1)!.name).toBe('JobFailed');
      expect(running.some((e) => e.name === 'JobCompleted' || e.name === 'JobFailed')).toBe(false);

      const started = Date.now();
      const sameTurn = [...completed, ...running.slice(0, 3)].map((e) => flusher.add(e));
      await Promise.all(sameTurn);
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(flusher.stats()).toMatchObject({ flushes: 1, waiting: 0, inserted: completed.length + 3 });

      // Events of a running job wait (no end, no quiet rule, 60 s timer)…
      const waiting = running.slice(3).map((e) => flusher.add(e));
      await new Promise((r) => setTimeout(r, 300));
      expect(flusher.stats()).toMatchObject({ flushes: 1, waiting: running.length - 3 });
      // …until another job ends: one flush carries both.
      await Promise.all([...waiting, ...failed.map((e) => flusher.add(e))]);
      expect(flusher.stats()).toMatchObject({ flushes: 2, waiting: 0, inserted: completed.length + running.length + failed.length });
    } finally {
      flusher.close();
    }
  });
});
