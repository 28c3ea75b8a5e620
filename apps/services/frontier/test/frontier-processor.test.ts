/**
 * The processor decides in place (no copy of the job's URL maps per batch), so what it saves and
 * what it caches must still be exactly what a copying decider would give, and a batch that fails
 * after deciding must leave no trace in the cache. Real Postgres; the producer is a stand-in that
 * acknowledges or refuses on demand, since "Kafka did not acknowledge" cannot be staged on a live
 * broker within a test.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { samples } from '@trawl/schemas';
import { createLogger, type EventProducer } from '@trawl/streams';
import { crawlSpec, inTransaction, migrate } from '@trawl/store';
import { createTestDatabase, type TestDatabase } from '@trawl/store/testing';
import { FrontierProcessor, type DecodedJobEvent } from '../src/frontier-processor.ts';
import { FrontierStore } from '../src/frontier-store.ts';
import { FRONTIER_MIGRATIONS } from '../src/migrations.ts';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
  await migrate(db.pool, 'frontier', FRONTIER_MIGRATIONS);
});
afterAll(async () => db?.drop());

class StandInProducer {
  refuse = false;
  readonly emitted: string[] = [];
  async emitEvent(name: string): Promise<string> {
    if (this.refuse) throw new Error('not acknowledged');
    this.emitted.push(name);
    return randomUUID();
  }
}

const logger = createLogger('frontier-test', { TRAWL_LOG_LEVEL: 'silent' });

function dispatched(jobId: string): DecodedJobEvent {
  return {
    name: 'JobDispatched',
    value: { ...samples.JobDispatched, job_id: jobId, start_urls: ['http://site.test/a', 'http://site.test/b'], spec: crawlSpec(null, { depth: 2, max_pages: 100 }) },
  };
}

function fetchedPage(jobId: string, fetchId: string, url: string, links: string[]): DecodedJobEvent {
  return { name: 'PageFetched', value: { ...samples.PageFetched, job_id: jobId, fetch_id: fetchId, url, links, next_page: null, item_count: 0 } };
}

async function outstandingRows(jobId: string): Promise<string[]> {
  const { rows } = await db.pool.query<{ url: string }>('SELECT url FROM frontier_urls WHERE job_id = $1 AND NOT done ORDER BY url', [jobId]);
  return rows.map((r) => r.url);
}

describe('frontier processor', () => {
  it('marks the fetches a batch finishes as done and stores the new ones', async () => {
    const jobId = randomUUID();
    const store = new FrontierStore();
    const processor = new FrontierProcessor(store, new StandInProducer() as unknown as EventProducer, logger);
    await inTransaction(db.pool, (tx) => processor.apply([dispatched(jobId)], tx));
    const [fetchId, fetch] = await inTransaction(db.pool, async (tx) => Object.entries((await store.load(tx, [jobId])).get(jobId)!.state.outstanding)[0]!);
    await inTransaction(db.pool, (tx) => processor.apply([fetchedPage(jobId, fetchId, fetch.url, ['http://site.test/c'])], tx));
    const remaining = ['http://site.test/a', 'http://site.test/b', 'http://site.test/c'].filter((u) => u !== fetch.url);
    expect(await outstandingRows(jobId)).toEqual(remaining);
    // A fresh store (a restart) loads what the cache holds.
    const cached = await inTransaction(db.pool, async (tx) => (await store.load(tx, [jobId])).get(jobId)!);
    const loaded = await inTransaction(db.pool, async (tx) => (await new FrontierStore().load(tx, [jobId])).get(jobId)!);
    expect(loaded).toEqual(cached);
  });

  it('forgets the states a failed batch changed in place, so the retry decides from Postgres', async () => {
    const jobId = randomUUID();
    const store = new FrontierStore();
    const producer = new StandInProducer();
    const processor = new FrontierProcessor(store, producer as unknown as EventProducer, logger);
    await inTransaction(db.pool, (tx) => processor.apply([dispatched(jobId)], tx));
    const [fetchId, fetch] = await inTransaction(db.pool, async (tx) => Object.entries((await store.load(tx, [jobId])).get(jobId)!.state.outstanding)[0]!);
    const page = fetchedPage(jobId, fetchId, fetch.url, ['http://site.test/c']);

    producer.refuse = true;
    await expect(inTransaction(db.pool, (tx) => processor.apply([page], tx))).rejects.toThrow('not acknowledged');
    producer.refuse = false;
    producer.emitted.length = 0;
    // The retry must request /c again: a stale cache would have it "seen" already and request nothing.
    await inTransaction(db.pool, (tx) => processor.apply([page], tx));
    expect(producer.emitted).toEqual(['FetchRequested']);
    const state = await inTransaction(db.pool, async (tx) => (await store.load(tx, [jobId])).get(jobId)!.state);
    expect(state.counters.pages_fetched).toBe(1);
    expect(Object.keys(state.outstanding)).toHaveLength(2);
  });

  it('marks every outstanding fetch done when the job is cancelled', async () => {
    const jobId = randomUUID();
    const processor = new FrontierProcessor(new FrontierStore(), new StandInProducer() as unknown as EventProducer, logger);
    await inTransaction(db.pool, (tx) => processor.apply([dispatched(jobId)], tx));
    expect(await outstandingRows(jobId)).toHaveLength(2);
    await inTransaction(db.pool, (tx) => processor.apply([{ name: 'JobCancelled', value: { ...samples.JobCancelled, job_id: jobId } }], tx));
    expect(await outstandingRows(jobId)).toEqual([]);
  });

  it('keeps a paused job, its queue and its place across a restart, out of the deadline, and requests the queue on resume', async () => {
    const jobId = randomUUID();
    const store = new FrontierStore();
    const producer = new StandInProducer();
    const processor = new FrontierProcessor(store, producer as unknown as EventProducer, logger);
    await inTransaction(db.pool, (tx) => processor.apply([dispatched(jobId)], tx));
    const pause: DecodedJobEvent = { name: 'JobPaused', value: { ...samples.JobPaused, event_id: randomUUID(), job_id: jobId } };
    await inTransaction(db.pool, (tx) => processor.apply([pause], tx));
    const [fetchId, fetch] = await inTransaction(db.pool, async (tx) => Object.entries((await store.load(tx, [jobId])).get(jobId)!.state.outstanding)[0]!);
    const before = producer.emitted.length;
    // An outcome of a fetch requested before the pause still counts; the links it brings wait.
    await inTransaction(db.pool, (tx) => processor.apply([fetchedPage(jobId, fetchId, fetch.url, ['http://site.test/c', 'http://site.test/d'])], tx));
    expect(producer.emitted.length).toBe(before);

    // A restart: a fresh store reads the same paused state, queue included.
    const cached = await inTransaction(db.pool, async (tx) => (await store.load(tx, [jobId])).get(jobId)!);
    const restarted = new FrontierStore();
    const loaded = await inTransaction(db.pool, async (tx) => (await restarted.load(tx, [jobId])).get(jobId)!);
    expect(loaded).toEqual(cached);
    expect(loaded.state.paused).toBe(true);
    expect(Object.values(loaded.state.queued).map((q) => q.url).sort()).toEqual(['http://site.test/c', 'http://site.test/d']);
    // Far past any deadline, a paused job is no candidate of the sweeper.
    expect(await restarted.silentJobs(db.pool, Date.now() + 365 * 86_400_000, 10_000)).not.toContain(jobId);

    const resume: DecodedJobEvent = { name: 'JobResumed', value: { ...samples.JobResumed, event_id: randomUUID(), job_id: jobId } };
    const again = new FrontierProcessor(restarted, producer as unknown as EventProducer, logger);
    const { emitted } = await inTransaction(db.pool, (tx) => again.apply([resume], tx, Date.now()));
    expect(emitted).toBe(2);
    const { rows } = await db.pool.query<{ n: string }>('SELECT count(*) AS n FROM frontier_urls WHERE job_id = $1 AND queued', [jobId]);
    expect(Number(rows[0]!.n)).toBe(0);
    const after = await inTransaction(db.pool, async (tx) => (await new FrontierStore().load(tx, [jobId])).get(jobId)!);
    expect(after.state.paused).toBe(false);
    expect(Object.values(after.state.outstanding).map((o) => o.url)).toEqual(expect.arrayContaining(['http://site.test/c', 'http://site.test/d']));
  });
});
