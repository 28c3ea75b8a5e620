/**
 * The fetch deadline at the frontier's edge: real Postgres (state, locks, the deadline's origin in
 * frontier_jobs.active_at), the sweeper's log clock fed the watermarks and offsets a test chooses.
 * The producer is a stand-in that acknowledges or refuses on demand (see frontier-processor.test.ts:
 * a refused acknowledgement cannot be staged on a live broker, and the events would land on the
 * shared stack's own topics); the whole path on real Kafka is apps/harness/e2e/test/lost-fetch.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { samples } from '@trawl/schemas';
import { createLogger, type EventProducer } from '@trawl/streams';
import { crawlSpec, inTransaction, migrate } from '@trawl/store';
import { createTestDatabase, type TestDatabase } from '@trawl/store/testing';
import { FETCH_LOST } from '@trawl/crawl';
import { DeadlineSweeper } from '../src/deadline-sweeper.ts';
import { FrontierProcessor, type DecodedJobEvent } from '../src/frontier-processor.ts';
import { FrontierStore } from '../src/frontier-store.ts';
import { FRONTIER_MIGRATIONS } from '../src/migrations.ts';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
  await migrate(db.pool, 'frontier', FRONTIER_MIGRATIONS);
});
afterAll(async () => db?.drop());

interface Produced {
  readonly name: string;
  readonly eventId: string;
  readonly body: Record<string, unknown>;
}

class StandInProducer {
  /** Refuse every send after this many more (null: never). */
  refuseAfter: number | null = null;
  readonly produced: Produced[] = [];
  async emitEvent(name: string, event: Record<string, unknown> & { event_id: string }): Promise<string> {
    if (this.refuseAfter !== null && this.refuseAfter-- <= 0) throw new Error('not acknowledged');
    this.produced.push({ name, eventId: event.event_id, body: event });
    return event.event_id;
  }
}

const logger = createLogger('frontier-test', { TRAWL_LOG_LEVEL: 'silent' });
const DEADLINE = 5_000;
const T0 = Date.parse('2026-11-21T10:00:00.000Z');

/** One frontier process: its store, processor and sweeper, on a log whose end and applied offsets the test sets. */
function frontier(producer: StandInProducer) {
  const log = { end: new Map([[0, 10n]]), applied: new Map([[0, 10n]]), now: T0 };
  const store = new FrontierStore();
  const processor = new FrontierProcessor(store, producer as unknown as EventProducer, logger);
  const sweeper = new DeadlineSweeper({
    pool: db.pool,
    store,
    processor,
    logger,
    deadlineMs: DEADLINE,
    sweepEveryMs: 60_000,
    pagesEnd: async () => new Map(log.end),
    pagesApplied: async () => new Map(log.applied),
    now: () => log.now,
  });
  return { log, store, processor, sweeper };
}

function dispatched(jobId: string): DecodedJobEvent {
  return {
    name: 'JobDispatched',
    value: { ...samples.JobDispatched, job_id: jobId, start_urls: ['http://site.test/a', 'http://site.test/b'], spec: crawlSpec(null, { depth: 0, max_pages: 100 }) },
  };
}

async function outstanding(store: FrontierStore, jobId: string) {
  return inTransaction(db.pool, async (tx) => (await store.load(tx, [jobId])).get(jobId)!.state);
}

/** A job dispatched at T0 whose /a is answered at T0 + 1 s and whose /b never is. */
async function jobWaitingForB(f: ReturnType<typeof frontier>) {
  const jobId = randomUUID();
  await inTransaction(db.pool, (tx) => f.processor.apply([dispatched(jobId)], tx, T0));
  const [fetchA, a] = Object.entries((await outstanding(f.store, jobId)).outstanding).find(([, o]) => o.url.endsWith('/a'))!;
  const page: DecodedJobEvent = { name: 'PageFetched', value: { ...samples.PageFetched, job_id: jobId, fetch_id: fetchA, url: a.url, links: [], next_page: null, item_count: 0 } };
  await inTransaction(db.pool, (tx) => f.processor.apply([page], tx, T0 + 1_000));
  return jobId;
}

describe('fetch deadline at the frontier', () => {
  it('fails a silent job\'s lost fetch with FETCH_LOST and completes it, not before the deadline', async () => {
    const producer = new StandInProducer();
    const f = frontier(producer);
    const jobId = await jobWaitingForB(f);
    producer.produced.length = 0;

    f.log.now = T0 + 1_000 + DEADLINE - 1;
    expect(await f.sweeper.sweep()).toMatchObject({ emitted: 0 });
    f.log.now = T0 + 1_000 + DEADLINE;
    expect(await f.sweeper.sweep()).toMatchObject({ at: T0 + 1_000 + DEADLINE, emitted: 2 });
    const mine = producer.produced.filter((p) => p.body.job_id === jobId);
    expect(mine.map((p) => p.name)).toEqual(['PageFailed', 'JobCompleted']);
    expect(mine[0]!.body).toMatchObject({ url: 'http://site.test/b', error_code: FETCH_LOST });
    expect(mine[1]!.body).toMatchObject({ outcome: 'finished', pages_fetched: 1, pages_failed: 1 });
    const { rows } = await db.pool.query('SELECT count(*)::int AS n FROM frontier_urls WHERE job_id = $1 AND NOT done', [jobId]);
    expect(rows[0].n).toBe(0);
    expect((await outstanding(new FrontierStore(), jobId)).status).toBe('completed');
  });

  it('waits while page events the frontier has not applied may hold the answer', async () => {
    const producer = new StandInProducer();
    const f = frontier(producer);
    const jobId = await jobWaitingForB(f);
    producer.produced.length = 0;
    f.log.now = T0 + 100 * DEADLINE;
    f.log.end = new Map([[0, 10n], [1, 50n]]);
    f.log.applied = new Map([[0, 10n], [1, 49n]]); // one page event not yet applied
    expect(await f.sweeper.sweep()).toMatchObject({ at: null, emitted: 0 });
    f.log.applied = new Map([[0, 10n], [1, 50n]]);
    const r = await f.sweeper.sweep();
    expect(r.at).toBe(T0 + 100 * DEADLINE);
    expect(producer.produced.filter((p) => p.body.job_id === jobId).map((p) => p.name)).toEqual(['PageFailed', 'JobCompleted']);
  });

  it('re-emits the same events after a crash between produce and commit, from the stored deadline origin', async () => {
    const producer = new StandInProducer();
    const first = frontier(producer);
    const jobId = await jobWaitingForB(first);
    producer.produced.length = 0;
    first.log.now = T0 + 10 * DEADLINE;
    producer.refuseAfter = 1; // the PageFailed is acknowledged, the JobCompleted is not
    await expect(first.sweeper.sweep()).rejects.toThrow('not acknowledged');
    const beforeCrash = producer.produced.filter((p) => p.body.job_id === jobId);
    expect((await outstanding(new FrontierStore(), jobId)).status).toBe('running'); // nothing committed

    producer.refuseAfter = null;
    producer.produced.length = 0;
    const restarted = frontier(producer); // a new process: empty cache, new log clock
    restarted.log.now = T0 + 20 * DEADLINE;
    expect(await restarted.sweeper.sweep()).toMatchObject({ emitted: 2 });
    const afterRestart = producer.produced.filter((p) => p.body.job_id === jobId);
    expect(afterRestart[0]).toEqual(beforeCrash[0]);
    expect(afterRestart.map((p) => p.name)).toEqual(['PageFailed', 'JobCompleted']);
  });

  it('absorbs the real outcome that arrives late: no event, counters unchanged', async () => {
    const producer = new StandInProducer();
    const f = frontier(producer);
    const jobId = await jobWaitingForB(f);
    const fetchB = Object.entries((await outstanding(f.store, jobId)).outstanding)[0]![0];
    f.log.now = T0 + 10 * DEADLINE;
    await f.sweeper.sweep();
    const counters = (await outstanding(f.store, jobId)).counters;
    producer.produced.length = 0;
    const late: DecodedJobEvent = { name: 'PageFetched', value: { ...samples.PageFetched, job_id: jobId, fetch_id: fetchB, url: 'http://site.test/b', links: ['http://site.test/c'], next_page: null, item_count: 4 } };
    expect(await inTransaction(db.pool, (tx) => f.processor.apply([late], tx, T0 + 11 * DEADLINE))).toEqual({ emitted: 0 });
    expect(producer.produced).toEqual([]);
    expect((await outstanding(new FrontierStore(), jobId)).counters).toEqual(counters);
  });
});
