import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { createPool } from '@trawl/store';
import { resetProjectionOffsets, type Projection } from '@trawl/streams';
import { startTcpProxy } from '@trawl/streams/testing';
import { startPgProjector } from '../src/projector/live-projector.ts';
import { applyBatch } from '../src/projector/apply-batch.ts';
import { tableSetChecksum } from '../src/sql/checksum.ts';
import { LIVE_TABLES } from '../src/sql/tables.ts';
import { PROJECTION_VERSION, projectionName } from '../src/version.ts';
import { createHarness, waitForCatchUp, type Harness } from './support/harness.ts';
import { compareWithEvents } from './support/compare.ts';
import { syntheticCrawl } from '@trawl/streams/testing';

const NAME = projectionName();

describe('projector-pg against the real stack', () => {
  let h: Harness;
  let pool: pg.Pool;
  let projection: Projection | undefined;
  const start = (p: pg.Pool = pool) =>
    startPgProjector({ pool: p, kafka: h.kafka, codec: h.codec, logger: h.logger, topics: h.topics, groupId: `projector-pg-${h.id}`, statsLogIntervalMs: 0 });

  beforeAll(async () => {
    h = await createHarness('projpg');
    pool = h.db.pool;
    await h.produce(syntheticCrawl({ jobs: 12, pagesPerJob: 30, seed: 11, runId: h.id }));
  });

  afterAll(async () => {
    await projection?.stop();
    await h?.close();
  });

  it('projects a crawl into read models that equal what the events say', async () => {
    projection = await start();
    await waitForCatchUp(h, pool, NAME);
    await compareWithEvents(h, pool);
    const log = await pool.query(`SELECT msg FROM job_log WHERE event = 'PageFetched' LIMIT 1`);
    expect(log.rows[0].msg).toMatch(/^fetched https:\/\/\S+ \d{3} \(\d+(\.\d)? (B|KB|MB), \d+ ms, \d+ items?/);
  });

  it('changes nothing when every event is delivered again', async () => {
    await projection!.stop();
    projection = undefined;
    const before = await tableSetChecksum(pool, LIVE_TABLES);
    // The consumer group is reset back to the start and the stored offsets are forgotten:
    // every event is delivered and handed to the projection again.
    await resetProjectionOffsets(pool, NAME);
    const admin = h.kafka.admin();
    await admin.connect();
    for (const topic of Object.values(h.topics)) await admin.resetOffsets({ groupId: `projector-pg-${h.id}`, topic, earliest: true });
    await admin.disconnect();
    projection = await start();
    await waitForCatchUp(h, pool, NAME);
    expect(await tableSetChecksum(pool, LIVE_TABLES)).toEqual(before);

    // And a batch applied twice over (the same events, once more) is absorbed by event id.
    const events = (await h.events()).map((e) => e.event);
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const result = await applyBatch(client, LIVE_TABLES, events.slice(0, 500));
      await client.query('COMMIT');
      expect(result.applied).toBe(0);
    } finally {
      client.release();
    }
    expect(await tableSetChecksum(pool, LIVE_TABLES)).toEqual(before);
  });

  it('pauses while Postgres is away and catches up without loss or double counting', async () => {
    await projection!.stop();
    projection = undefined;
    const url = new URL(h.db.url);
    const proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port || 5432) });
    url.hostname = '127.0.0.1';
    url.port = String(proxy.port);
    const viaProxy = createPool({ connectionString: url.toString(), max: 6 });
    viaProxy.on('error', () => undefined);
    try {
      projection = await start(viaProxy);
      await proxy.cut();
      // Events arrive while the database is unreachable...
      await h.produce(syntheticCrawl({ jobs: 4, pagesPerJob: 20, seed: 12, runId: `${h.id}-b` }));
      // ...so its writes fail (and are retried with backoff)...
      await expect.poll(() => projection!.stats().failures, { timeout: 60_000, interval: 100 }).toBeGreaterThan(0);
      // ...and are all there, once each, after it returns.
      await proxy.restore();
      await waitForCatchUp(h, pool, NAME);
      await compareWithEvents(h, pool);
    } finally {
      await projection?.stop();
      projection = undefined;
      await viaProxy.end().catch(() => undefined);
      await proxy.close();
    }
  });

  it('stops writing once a replay of a newer version swapped in its tables', async () => {
    let superseded: { code: string } | undefined;
    projection = await startPgProjector({
      pool, kafka: h.kafka, codec: h.codec, logger: h.logger, topics: h.topics, groupId: `projector-pg-${h.id}`, statsLogIntervalMs: 0,
      onSuperseded: (err) => (superseded = err),
    });
    const before = await tableSetChecksum(pool, LIVE_TABLES);
    // What a replay of the next version records when it swaps its tables in.
    await pool.query(`UPDATE projection_versions SET version = $1 WHERE projection = 'pg'`, [PROJECTION_VERSION + 1]);
    try {
      await h.produce(syntheticCrawl({ jobs: 1, pagesPerJob: 3, seed: 13, runId: `${h.id}-c` }));
      await expect.poll(() => superseded?.code, { timeout: 30_000, interval: 100 }).toBe('PG_PROJECTION_SUPERSEDED');
      expect(await tableSetChecksum(pool, LIVE_TABLES)).toEqual(before);
    } finally {
      await projection.stop();
      projection = undefined;
      await pool.query(`UPDATE projection_versions SET version = $1 WHERE projection = 'pg'`, [PROJECTION_VERSION]);
    }
  });
});
