import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import type { Projection } from '@trawl/streams';
import { startPgProjector } from '../src/projector/live-projector.ts';
import { replayPg } from '../src/replay/replay-pg.ts';
import { tableSetChecksum } from '../src/sql/checksum.ts';
import { LIVE_TABLES } from '../src/sql/tables.ts';
import { projectionName } from '../src/version.ts';
import { createHarness, waitForCatchUp, type Harness } from './support/harness.ts';
import { compareWithEvents } from './support/compare.ts';
import { syntheticJob } from '@trawl/streams/testing';

describe('replayPg against the real stack', () => {
  let h: Harness;
  let pool: pg.Pool;
  let projection: Projection | undefined;
  let preloaded = 0;

  beforeAll(async () => {
    h = await createHarness('replaypg');
    pool = h.db.pool;
    for (let j = 0; j < 10; j++) {
      const events = syntheticJob(j, { jobs: 0, pagesPerJob: 40, seed: 5, runId: h.id });
      await h.produce(events);
      preloaded += events.length;
    }
    projection = await startPgProjector({ pool, kafka: h.kafka, codec: h.codec, logger: h.logger, topics: h.topics, groupId: `projector-pg-${h.id}`, statsLogIntervalMs: 0 });
    await waitForCatchUp(h, pool, projectionName());
  });

  afterAll(async () => {
    await projection?.stop();
    await h?.close();
  });

  it('rebuilds to equal checksums and swaps while events keep flowing and readers keep reading', async () => {
    // A crawl goes on during the replay...
    let producing = true;
    let produced = 0;
    const producer = (async () => {
      for (let j = 100; producing; j++) {
        await h.produce(syntheticJob(j, { jobs: 0, pagesPerJob: 15, seed: 6, runId: h.id }));
        produced++;
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    // ...and the API keeps reading the tables by their names.
    let reading = true;
    let reads = 0;
    const readErrors: unknown[] = [];
    const reader = (async () => {
      while (reading) {
        try {
          await pool.query(`SELECT status, count(*) FROM jobs GROUP BY status`);
          await pool.query(`SELECT l.msg FROM job_log l JOIN jobs j USING (job_id) ORDER BY l.seq DESC LIMIT 5`);
          reads++;
        } catch (err) {
          readErrors.push(err);
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    })();

    const phases: string[] = [];
    const report = await replayPg({
      pool, kafka: h.kafka, codec: h.codec, logger: h.logger, topics: h.topics,
      batchSize: 500, swapThreshold: 100,
      progress: (p) => phases.push(p.phase),
    }).finally(async () => {
      producing = false;
      await producer;
      await new Promise((r) => setTimeout(r, 300));
      reading = false;
      await reader;
    });

    expect(report.verified).toBe('live');
    // Everything in the topics before the replay began, plus however much the crawl added meanwhile
    // (timing-dependent, so only its lower bound is asserted; compareWithEvents checks the content).
    expect(report.events).toBeGreaterThanOrEqual(preloaded);
    expect(report.checksum.logGaps).toBe(0);
    expect(phases).toEqual(expect.arrayContaining(['catch-up', 'index', 'swap', 'done']));
    expect(produced).toBeGreaterThan(0);
    expect(readErrors).toEqual([]);
    expect(reads).toBeGreaterThan(10);
    const leftovers = await pool.query(`SELECT tablename FROM pg_tables WHERE tablename LIKE '%\\_\\_%'`);
    expect(leftovers.rows).toEqual([]);

    // The live projector went on in the swapped-in tables, and they hold every event once.
    await waitForCatchUp(h, pool, projectionName());
    await compareWithEvents(h, pool);

    // A second replay, now at rest, rebuilds the very same content.
    const before = await tableSetChecksum(pool, LIVE_TABLES);
    const again = await replayPg({ pool, kafka: h.kafka, codec: h.codec, logger: h.logger, topics: h.topics, progress: null });
    expect(again.verified).toBe('live');
    const { log: _a, ...rest1 } = before;
    const { log: _b, ...rest2 } = await tableSetChecksum(pool, LIVE_TABLES);
    expect(rest2).toEqual(rest1);
  });

  it('refuses a replay from a timestamp, which cannot rebuild whole jobs', async () => {
    await expect(replayPg({ pool, kafka: h.kafka, codec: h.codec, topics: h.topics, from: new Date(), progress: null })).rejects.toMatchObject({ code: 'PG_REPLAY_OPTIONS', retriable: false });
  });
});
