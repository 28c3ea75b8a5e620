/**
 * Replay equivalence as a property, against the real Postgres (and Kafka for the end-to-end part):
 * for generated logs holding what at-least-once delivery puts in a real one (re-emitted copies at
 * other offsets with other times and figures, fetches ended twice, out-of-order job and page
 * events, cancelled and running jobs), the pure model, the live projection and the replay build
 * tables with equal checksums.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type pg from 'pg';
import { createTestDatabase, type TestDatabase } from '@trawl/store/testing';
import { atLeastOnceLog, consumerOrder, decoded, placeInPartitions, prng, requireStack, type PlacedRecord } from '@trawl/streams/testing';
import type { Projection } from '@trawl/streams';
import { applyBatch } from '../src/projector/apply-batch.ts';
import { BulkBuilder } from '../src/replay/bulk-build.ts';
import type { PositionedEvent } from '../src/model/projectable-event.ts';
import { InMemoryReadModel } from '../src/model/in-memory-model.ts';
import { readModelDdl, keyDdl, indexDdl, tableDdl } from '../src/sql/ddl.ts';
import { copyRows } from '../src/sql/copy-rows.ts';
import { CACHE_COLUMNS, ITEM_COLUMNS, JOB_COLUMNS, LOG_COLUMNS, PAGE_COLUMNS } from '../src/sql/row-columns.ts';
import { ident, suffixedTables, tableList, LIVE_TABLES, type TableSet } from '../src/sql/tables.ts';
import { checksumDifferences, tableSetChecksum, type TableSetChecksum } from '../src/sql/checksum.ts';
import { startPgProjector } from '../src/projector/live-projector.ts';
import { replayPg } from '../src/replay/replay-pg.ts';
import { projectionName } from '../src/version.ts';
import { createHarness, waitForCatchUp, type Harness } from './support/harness.ts';

/** Generated logs of the Postgres-only property; TRAWL_PROPERTY_RUNS sets it. */
const RUNS = Number(process.env.TRAWL_PROPERTY_RUNS ?? 40);
/** Logs produced to Kafka and replayed by replayPg next to a live projector. */
const KAFKA_RUNS = Number(process.env.TRAWL_PROPERTY_KAFKA_RUNS ?? 6);

const TOPICS = { jobs: 'jobs', pages: 'pages', items: 'items' } as const;
const positioned = (r: PlacedRecord): PositionedEvent & { topic: string } => ({ ...decoded(r.event), topic: TOPICS[r.topic], partition: r.partition, offset: r.offset });

/** Cuts a list into batches of the given sizes, in turn. */
function batches<T>(xs: readonly T[], sizes: readonly number[]): T[][] {
  const out: T[][] = [];
  for (let i = 0, b = 0; i < xs.length; b++) {
    const n = Math.max(1, sizes[b % sizes.length]!);
    out.push(xs.slice(i, i + n));
    i += n;
  }
  return out;
}

async function inTransaction(pool: pg.Pool, work: (c: pg.PoolClient) => Promise<void>): Promise<void> {
  const c = await pool.connect();
  try {
    await c.query('BEGIN');
    await work(c);
    await c.query('COMMIT');
  } catch (err) {
    await c.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    c.release();
  }
}

describe('replay equivalence on Postgres', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    await requireStack({ postgres: true });
    db = await createTestDatabase('trawl_test_equiv');
  });
  afterAll(async () => {
    await db?.drop();
  });

  /** The live path: applyBatch per batch, each in its transaction, as the projector runs it. */
  async function live(t: TableSet, events: readonly PositionedEvent[], sizes: readonly number[]): Promise<void> {
    await db.pool.query(readModelDdl(t));
    for (const b of batches(events, sizes)) await inTransaction(db.pool, (c) => applyBatch(c, t, b).then(() => undefined));
  }

  /** The replay path: bulk load of a prefix (stage, settle, keys), the rest row by row, as replayPg does. */
  async function replay(t: TableSet, events: readonly PositionedEvent[], sizes: readonly number[], bulkPart: number): Promise<void> {
    await db.pool.query(tableDdl(t));
    const bulk = new BulkBuilder(db.pool, t, TOPICS);
    await bulk.createStage();
    const cut = Math.floor(events.length * bulkPart);
    for (const b of batches(events.slice(0, cut), sizes)) await bulk.add(b);
    await bulk.finish();
    await db.pool.query(keyDdl(t) + indexDdl(t));
    await bulk.dropStage();
    for (const b of batches(events.slice(cut), sizes)) await inTransaction(db.pool, (c) => applyBatch(c, t, b).then(() => undefined));
  }

  /** The pure model, written out row for row. */
  async function modelled(t: TableSet, events: readonly PositionedEvent[]): Promise<void> {
    const m = new InMemoryReadModel();
    m.apply(events);
    await db.pool.query(readModelDdl(t));
    const c = await db.pool.connect();
    try {
      await copyRows(c, t.jobs, JOB_COLUMNS, [...m.jobs.values()]);
      await copyRows(c, t.pages, PAGE_COLUMNS, [...m.pages.values()]);
      await copyRows(c, t.items, ITEM_COLUMNS, [...m.items.values()]);
      await copyRows(c, t.log, LOG_COLUMNS, m.log);
      await copyRows(c, t.cache, CACHE_COLUMNS, [...m.cache.values()]);
    } finally {
      c.release();
    }
  }

  it(`the pure model, the live path and the replay path build equal tables (${RUNS} generated logs)`, async () => {
    let run = 0;
    let cacheRows = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 2 ** 31 - 1 }),
        fc.integer({ min: 1, max: 4 }),
        fc.tuple(fc.integer(), fc.integer(), fc.integer()),
        fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 4 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        async (seed, partitions, orders, sizes, bulkPart) => {
          const log = placeInPartitions(atLeastOnceLog({ seed, pauses: true }), partitions);
          const sets = ['m', 'l', 'r'].map((k) => suffixedTables(`${k}${run}`));
          run++;
          try {
            // Each path reads the log in its own interleaving of the partitions, as a live consumer and a replay would.
            await modelled(sets[0]!, consumerOrder(log, orders[0]).map(positioned));
            await live(sets[1]!, consumerOrder(log, orders[1]).map(positioned), sizes);
            await replay(sets[2]!, consumerOrder(log, orders[2]).map(positioned), sizes, bulkPart);
            const [m, l, r] = await Promise.all(sets.map((s) => tableSetChecksum(db.pool, s)));
            expect({ live: checksumDifferences(l!, m!), replay: checksumDifferences(r!, m!) }).toEqual({ live: [], replay: [] });
            expect(m!.jobs.rows).toBeGreaterThan(0);
            cacheRows += m!.cache.rows;
          } finally {
            await db.pool.query(`DROP TABLE IF EXISTS ${sets.flatMap(tableList).map(ident).join(', ')}`);
          }
        },
      ),
      { numRuns: RUNS },
    );
    // The HTTP cache table took part (the logs hold cacheable pages of users' jobs).
    expect(cacheRows).toBeGreaterThan(0);
  });
});

describe('replay equivalence end to end (Kafka, live projector, replayPg)', () => {
  let h: Harness;
  let projection: Projection | undefined;

  beforeAll(async () => {
    h = await createHarness('equivpg');
  });
  afterAll(async () => {
    await projection?.stop();
    await h?.close();
  });

  const startLive = (group: string) =>
    startPgProjector({ pool: h.db.pool, kafka: h.kafka, codec: h.codec, logger: h.logger, topics: h.topics, groupId: `projector-pg-${h.id}-${group}`, statsLogIntervalMs: 0 });

  it(`replays logs holding re-emitted copies to the live tables' checksums and to the pure model (${KAFKA_RUNS} generated logs)`, async () => {
    const rnd = prng(20261125);
    const produced: PlacedRecord[] = [];
    projection = await startLive('0');
    for (let run = 0; run < KAFKA_RUNS; run++) {
      const seed = 1 + Math.floor(rnd() * 2 ** 30);
      const log = atLeastOnceLog({ seed, runId: `${h.id}-${run}`, pauses: true });
      await h.produce(log.map((r) => r.event));
      produced.push(...placeInPartitions(log, 1));
      if (run % 2 === 1) {
        // Redelivery: a new consumer group reads the topics from the start; the stored offsets skip what was applied.
        await projection.stop();
        projection = await startLive(String(run));
      }
      await waitForCatchUp(h, h.db.pool, projectionName());
      const report = await replayPg({ pool: h.db.pool, kafka: h.kafka, codec: h.codec, logger: h.logger, topics: h.topics, batchSize: 50, swapThreshold: 10, progress: null });
      expect(report.verified, `run ${run} (seed ${seed})`).toBe('live');
      expect(report.checksum.logGaps).toBe(0);
    }
    // And the swapped-in tables equal the pure model of everything in the topics, read back in log order.
    const inLog = await h.events();
    const m = new InMemoryReadModel();
    m.apply(inLog.map((e) => e.event));
    const model = suffixedTables('model');
    await h.db.pool.query(readModelDdl(model));
    const c = await h.db.pool.connect();
    try {
      await copyRows(c, model.jobs, JOB_COLUMNS, [...m.jobs.values()]);
      await copyRows(c, model.pages, PAGE_COLUMNS, [...m.pages.values()]);
      await copyRows(c, model.items, ITEM_COLUMNS, [...m.items.values()]);
      await copyRows(c, model.log, LOG_COLUMNS, m.log);
      await copyRows(c, model.cache, CACHE_COLUMNS, [...m.cache.values()]);
    } finally {
      c.release();
    }
    const expected: TableSetChecksum = await tableSetChecksum(h.db.pool, model);
    expect(checksumDifferences(await tableSetChecksum(h.db.pool, LIVE_TABLES), expected)).toEqual([]);
    expect(produced.filter((r) => r.copy).length).toBeGreaterThan(0);
    expect(inLog.length).toBe(produced.length);
  });
});
