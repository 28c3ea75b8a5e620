/**
 * The dead-letter projection on the real stack: both dead-letter topics into `dead_letters` with
 * each message's owner (its job's user), reason and origin, undecodable ones kept unowned; each
 * message once, however often delivered; owners filled in once the job is known; and a rebuild
 * from the log gives the same rows.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { samples } from '@trawl/schemas';
import { deadLetterFor, EventCodec, EventProducer, TRAWL_HEADERS, type Projection } from '@trawl/streams';
import { createTestTopics, deleteSubjects, requireStack, testId, testKafka, testLogger, waitFor, type TestTopics } from '@trawl/streams/testing';
import { createTestDatabase, type TestDatabase } from '@trawl/store/testing';
import { setupReadModels } from '../src/sql/read-model-setup.ts';
import { startDeadLetterProjector } from '../src/dead-letters/dead-letter-projector.ts';
import { rebuildDeadLetters } from '../src/dead-letters/rebuild-dead-letters.ts';
import { setupDeadLetters } from '../src/dead-letters/dead-letter-ddl.ts';

const logger = testLogger('dead-letters');
const kafka = testKafka('dead-letters', logger);
const codec = new EventCodec();
let topics: TestTopics;
let producer: EventProducer;
let db: TestDatabase;
const alice = { user: `alice-${randomUUID()}`, job: randomUUID() };
const bob = { user: `bob-${randomUUID()}`, job: randomUUID() };
let produced = 0;

async function fetchDeadLetter(jobId: string, url: string, reason: 'exhausted' | 'non-retriable' = 'exhausted'): Promise<void> {
  const value = await codec.encode(topics.names.fetch!, 'FetchRequested', { ...samples.FetchRequested, event_id: randomUUID(), job_id: jobId, fetch_id: randomUUID(), url });
  const { record } = deadLetterFor(
    { topic: `${topics.names.fetch}.retry.3`, partition: 0, offset: '7', key: Buffer.from(new URL(url).host), value,
      headers: { [TRAWL_HEADERS.originalTopic]: topics.names.fetch!, [TRAWL_HEADERS.originalPartition]: '1', [TRAWL_HEADERS.originalOffset]: '42' } },
    { deadLetterTopic: topics.names['fetch.dlq']!, reason, attempts: 4, error: Object.assign(new Error(`503 from ${url}`), { name: 'HttpStatusError', code: 'HTTP_STATUS' }) },
  );
  await producer.sendRaw(record);
  produced++;
}

function start(group = testId('g-dlq')): Promise<Projection> {
  return startDeadLetterProjector({
    pool: db.pool,
    kafka,
    codec,
    logger,
    topics: { fetch: topics.names['fetch.dlq']!, events: topics.names['events.dlq']! },
    groupId: group,
    adoptEveryMs: 200,
    statsLogIntervalMs: 0,
  });
}

const count = async () => Number((await db.pool.query('SELECT count(*) AS n FROM dead_letters')).rows[0].n);
const content = async () =>
  (await db.pool.query(`SELECT id, source, user_id, job_id, event, url, reason, error_class, error_message, attempts, failed_at, origin_topic,
     origin_partition, origin_offset, encode(key, 'hex') AS key, md5(value) AS value, headers FROM dead_letters ORDER BY id`)).rows;

beforeAll(async () => {
  await requireStack({ kafka: true, registry: true, postgres: true });
  topics = await createTestTopics(kafka, ['fetch', { name: 'fetch.dlq', partitions: 2 }, 'events.dlq']);
  producer = new EventProducer({ kafka, logger, codec });
  await producer.connect();
  db = await createTestDatabase('trawl_test_dlq');
  await setupReadModels(db.pool);
  await db.pool.query("INSERT INTO jobs (job_id, user_id, status, updated_at) VALUES ($1, $2, 'running', now())", [alice.job, alice.user]);
  await fetchDeadLetter(alice.job, 'https://shop.example/a');
  await fetchDeadLetter(alice.job, 'https://shop.example/b', 'non-retriable');
  await fetchDeadLetter(bob.job, 'https://news.example/x');
  await producer.sendRaw({ topic: topics.names['events.dlq']!, key: null, value: Buffer.from('garbage \u0000 bytes'), headers: { [TRAWL_HEADERS.deadLetterReason]: 'undecodable' } });
  produced++;
}, 60_000);

afterAll(async () => {
  await producer?.disconnect();
  await db?.drop();
  await topics?.delete();
  await deleteSubjects(topics?.prefix ?? 'never');
});

describe('dead_letters projection', () => {
  it("stores every dead letter once with its job's user, reason and origin; fills in an owner once the job is known", async () => {
    const projection = await start();
    try {
      await waitFor(async () => (await count()) === produced, { message: 'every dead letter projected' });
      const rows = await content();
      const a = rows.find((r) => r.url === 'https://shop.example/a');
      expect(a).toMatchObject({
        source: 'fetch', user_id: alice.user, job_id: alice.job, event: 'FetchRequested', reason: 'exhausted', error_class: 'HttpStatusError',
        error_message: '503 from https://shop.example/a', attempts: 4, origin_topic: topics.names.fetch, origin_partition: 1, origin_offset: 42,
        key: Buffer.from('shop.example').toString('hex'),
      });
      expect(rows.find((r) => r.url === 'https://shop.example/b')).toMatchObject({ reason: 'non-retriable', user_id: alice.user });
      // Bob's job is not projected yet: his dead letter waits unowned, then is adopted.
      expect(rows.find((r) => r.url === 'https://news.example/x')).toMatchObject({ user_id: null, job_id: bob.job });
      const garbage = rows.find((r) => r.source === 'events');
      expect(garbage).toMatchObject({ user_id: null, job_id: null, event: null, reason: 'undecodable' });
      await db.pool.query("INSERT INTO jobs (job_id, user_id, status, updated_at) VALUES ($1, $2, 'running', now())", [bob.job, bob.user]);
      await waitFor(async () => (await db.pool.query('SELECT user_id FROM dead_letters WHERE job_id = $1', [bob.job])).rows[0]?.user_id === bob.user, {
        message: "bob's dead letter adopted",
      });
      // A new group is given everything again: the stored offsets skip it all.
      await projection.stop();
      const again = await start();
      await again.ready;
      await fetchDeadLetter(alice.job, 'https://shop.example/c');
      await waitFor(async () => (await count()) === produced, { message: 'the new dead letter' });
      await new Promise((r) => setTimeout(r, 500));
      expect(await count()).toBe(produced);
      await again.stop();
    } finally {
      await projection.stop();
    }
  });

  it('a rebuild from the log gives the same rows; it refuses while the projection runs', async () => {
    const before = await content();
    expect(before).toHaveLength(produced);
    const group = testId('g-dlq-rebuild');
    const running = await start(group);
    await running.ready;
    const dlqs = { fetch: topics.names['fetch.dlq']!, events: topics.names['events.dlq']! };
    await expect(rebuildDeadLetters({ pool: db.pool, kafka, groupId: group, topics: dlqs })).rejects.toMatchObject({ code: 'PG_DEAD_LETTERS_IN_USE' });
    await running.stop();
    expect(await rebuildDeadLetters({ pool: db.pool, kafka, groupId: group, topics: dlqs })).toEqual({ removed: produced });
    expect(await count()).toBe(0);
    const rebuilt = await start(group);
    try {
      await waitFor(async () => (await count()) === produced, { message: 'the rebuild' });
      await waitFor(async () => JSON.stringify(await content()) === JSON.stringify(before), { message: 'the same rows (owners adopted)' });
    } finally {
      await rebuilt.stop();
    }
  });

  it('a projector of a newer version rebuilds the table of an older one', async () => {
    await db.pool.query("UPDATE projection_versions SET version = 0 WHERE projection = 'dead-letters'");
    expect(await setupDeadLetters(db.pool)).toEqual({ created: true });
    expect(await count()).toBe(0);
    expect((await db.pool.query("SELECT version FROM projection_versions WHERE projection = 'dead-letters'")).rows[0].version).toBe(1);
  });
});
