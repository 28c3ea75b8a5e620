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
  async emit(name: string): Promise<string> {
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
});
