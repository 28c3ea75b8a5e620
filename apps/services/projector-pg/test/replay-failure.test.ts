/**
 * A replay that fails leaves the live read models as they were and says which event broke which
 * constraint of which table, with the event's place in the log — not the shadow table's index name.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { samples } from '@trawl/schemas';
import type { Projection } from '@trawl/streams';
import { createTestDatabase, type TestDatabase } from '@trawl/store/testing';
import { syntheticJob } from '@trawl/streams/testing';
import { startPgProjector } from '../src/projector/live-projector.ts';
import { replayPg } from '../src/replay/replay-pg.ts';
import { BulkBuilder } from '../src/replay/bulk-build.ts';
import { tableSetChecksum } from '../src/sql/checksum.ts';
import { tableDdl } from '../src/sql/ddl.ts';
import { LIVE_TABLES, suffixedTables } from '../src/sql/tables.ts';
import { projectionName } from '../src/version.ts';
import { ReplayConstraintError } from '../src/errors.ts';
import { createHarness, waitForCatchUp, type Harness } from './support/harness.ts';

describe('a replay that fails', () => {
  let h: Harness;
  let projection: Projection | undefined;

  beforeAll(async () => {
    h = await createHarness('replayfail');
    projection = await startPgProjector({ pool: h.db.pool, kafka: h.kafka, codec: h.codec, logger: h.logger, topics: h.topics, groupId: `projector-pg-${h.id}`, statsLogIntervalMs: 0 });
  });
  afterAll(async () => {
    await projection?.stop();
    await h?.close();
  });

  it('leaves the live read models untouched and names the event, its log positions, the table and the constraint', async () => {
    const [a, b] = [syntheticJob(0, { jobs: 0, pagesPerJob: 4, seed: 8, runId: h.id }), syntheticJob(1, { jobs: 0, pagesPerJob: 4, seed: 8, runId: h.id })];
    // A page of job b reuses the id of a page of job a: no Trawl producer derives ids so (they include
    // the job id), and the replay, whose settle relies on that, must refuse the log loudly rather than differ.
    const reused = a.find((e) => e.name === 'PageFetched')!.eventId;
    const first = b.findIndex((e) => e.name === 'PageFetched');
    const b2 = b.map((e, i) => (i === first ? { ...e, eventId: reused } : e));
    await h.produce(a);
    await h.produce(b2);
    await waitForCatchUp(h, h.db.pool, projectionName());
    const before = await tableSetChecksum(h.db.pool, LIVE_TABLES);

    const failure = await replayPg({ pool: h.db.pool, kafka: h.kafka, codec: h.codec, logger: h.logger, topics: h.topics, swapThreshold: 0, progress: null }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(failure).toBeInstanceOf(ReplayConstraintError);
    const err = failure as ReplayConstraintError;
    expect(err).toMatchObject({ code: 'PG_REPLAY_CONSTRAINT', retriable: false });
    expect(err.details).toMatchObject({ table: 'job_log', constraint: 'job_log_event_id_key', key: { event_id: reused } });
    expect(err.details.events.map((e) => ({ topic: e.topic, event: e.event, event_id: e.event_id }))).toEqual([
      { topic: h.topics.pages, event: 'PageFetched', event_id: reused },
      { topic: h.topics.pages, event: 'PageFetched', event_id: reused },
    ]);
    expect(err.message).toContain('job_log_event_id_key');
    expect(err.message).toContain(reused);
    for (const e of err.details.events) expect(err.message).toContain(`${h.topics.pages} partition ${e.partition} offset ${e.offset}`);
    expect(err.message).not.toMatch(/__r[a-z0-9]+/);
    expect(err.message).toContain('live read models are untouched');

    // Untouched indeed: the same content, no shadow or stage table left, and the live projector goes on.
    expect(await tableSetChecksum(h.db.pool, LIVE_TABLES)).toEqual(before);
    const left = await h.db.pool.query(`SELECT tablename FROM pg_tables WHERE schemaname = current_schema() AND tablename LIKE '%\\_\\_%'`);
    expect(left.rows).toEqual([]);
    await h.produce(syntheticJob(2, { jobs: 0, pagesPerJob: 2, seed: 8, runId: h.id }));
    await waitForCatchUp(h, h.db.pool, projectionName());
    expect((await tableSetChecksum(h.db.pool, LIVE_TABLES)).jobs.rows).toBe(before.jobs.rows + 1);
  });
});

describe('a row the stage refuses', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase('trawl_test_refused');
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('is traced to its event and log position', async () => {
    const shadow = suffixedTables('rrefused');
    await db.pool.query(tableDdl(shadow));
    const bulk = new BulkBuilder(db.pool, shadow, { jobs: 't.jobs', pages: 't.pages', items: 't.items' });
    await bulk.createStage();
    // A time JavaScript holds and Postgres cannot (before 4713 BC).
    const ancient = new Date(-8e15);
    const ok = { name: 'PageFetched' as const, value: { ...samples.PageFetched, event_id: 'fine' }, partition: 2, offset: 40n };
    const bad = { name: 'PageFetched' as const, value: { ...samples.PageFetched, event_id: 'ancient', fetch_id: 'f-old', occurred_at: ancient }, partition: 2, offset: 41n };
    const err = await bulk.add([ok, bad]).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(ReplayConstraintError);
    expect((err as ReplayConstraintError).details.events).toEqual([
      { topic: 't.pages', partition: 2, offset: '41', event: 'PageFetched', event_id: 'ancient', occurred_at: ancient.toISOString() },
    ]);
    expect((err as Error).message).toMatch(/job_pages refuses a row .*PageFetched ancient at t\.pages partition 2 offset 41/);
  });
});
