/**
 * Dead letters on the real Kafka, registry and Postgres: projector-pg's dead-letter projection
 * fills `dead_letters` from the test's DLQ topics; each user sees the dead letters of their own
 * jobs only (undecodable ones nobody), in keyset pages, without the console reading any topic (its
 * Kafka client here points at nothing); a re-drive republishes the original key and value bytes
 * to the origin topic, once.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { samples } from '@trawl/schemas';
import { createKafka, deadLetterFor, endpoints, EventCodec, EventProducer, headerStrings, readTopics, TRAWL_HEADERS, type Projection } from '@trawl/streams';
import { createTestTopics, deleteSubjects, requireStack, testId, testKafka, testLogger, waitFor, type TestTopics } from '@trawl/streams/testing';
import { startDeadLetterProjector } from '@trawl/projector-pg';
import { consoleHarness, type ConsoleHarness } from './support/console-harness.ts';

const logger = testLogger('console-dlq');
const kafka = testKafka('console-dlq', logger);
const codec = new EventCodec();
let topics: TestTopics;
let producer: EventProducer;
let h: ConsoleHarness;
let projection: Projection;
let produced = 0;
const aliceJob = randomUUID();
const bobJob = randomUUID();

async function deadLetter(jobId: string, url: string, options: { reason?: 'exhausted' | 'non-retriable'; attempts?: number; origin?: string; value?: Buffer } = {}) {
  const origin = options.origin ?? topics.names.fetch!;
  const value = options.value ?? (await codec.encode(topics.names.fetch!, 'FetchRequested', { ...samples.FetchRequested, event_id: randomUUID(), job_id: jobId, fetch_id: randomUUID(), url }));
  const { record } = deadLetterFor(
    { topic: `${origin}.retry.3`, partition: 0, offset: '7', key: Buffer.from(new URL(url).host), value, headers: { [TRAWL_HEADERS.event]: 'FetchRequested', [TRAWL_HEADERS.originalTopic]: origin, [TRAWL_HEADERS.originalPartition]: '1', [TRAWL_HEADERS.originalOffset]: '42' } },
    { deadLetterTopic: topics.names['fetch.dlq']!, reason: options.reason ?? 'exhausted', attempts: options.attempts ?? 4, error: Object.assign(new Error(`503 from ${url}`), { name: 'HttpStatusError', code: 'HTTP_STATUS' }) },
  );
  await producer.sendRaw(record);
  produced++;
}

beforeAll(async () => {
  await requireStack({ kafka: true, registry: true, postgres: true });
  topics = await createTestTopics(kafka, [{ name: 'fetch', partitions: 2 }, { name: 'fetch.dlq', partitions: 2 }, { name: 'events.dlq' }]);
  producer = new EventProducer({ kafka, logger, codec });
  await producer.connect();
  h = await consoleHarness({
    // Nothing answers there: every read below comes from Postgres.
    kafka: createKafka({ clientId: 'console-dlq-nowhere', logger, endpoints: { ...endpoints(), kafkaBrokers: ['127.0.0.1:1'] } }),
    codec,
    producer,
    redriveTopics: [topics.names.fetch!],
  });
  await h.ownJob('alice', aliceJob);
  await h.ownJob('bob', bobJob);
  await deadLetter(aliceJob, 'https://shop.example/a');
  await deadLetter(aliceJob, 'https://shop.example/robots-says-no', { reason: 'non-retriable', attempts: 1 });
  await deadLetter(bobJob, 'https://news.example/b');
  await deadLetter(aliceJob, 'https://shop.example/foreign', { origin: 'not-a-trawl-topic' });
  // Undecodable: no job, so nobody's.
  await producer.sendRaw({ topic: topics.names['events.dlq']!, key: null, value: Buffer.from('garbage'), headers: { [TRAWL_HEADERS.deadLetterReason]: 'undecodable' } });
  produced++;
  projection = await startDeadLetterProjector({
    pool: h.db.pool,
    kafka,
    codec,
    logger,
    topics: { fetch: topics.names['fetch.dlq']!, events: topics.names['events.dlq']! },
    groupId: testId('g-console-dlq'),
    statsLogIntervalMs: 0,
  });
  await waitFor(async () => Number((await h.db.pool.query('SELECT count(*) AS n FROM dead_letters')).rows[0].n) === produced, { message: 'the dead letters projected' });
}, 60_000);

afterAll(async () => {
  await projection?.stop();
  await h?.close();
  await producer?.disconnect();
  await topics?.delete();
  await deleteSubjects(topics?.prefix ?? 'never');
});

const list = async (user: string, query = '') => (await h.app.inject({ method: 'GET', url: `/dead-letters${query}`, headers: h.auth(user) })).json();
const redrive = (user: string, id: string) => h.app.inject({ method: 'POST', url: `/dead-letters/${id}/redrive`, headers: h.auth(user) });

describe('dead letters', () => {
  it("lists the caller's dead letters with what failed and why, and nobody else's", async () => {
    const alice = await list('alice');
    expect(alice.dead_letters).toHaveLength(3);
    expect(alice.next_cursor).toBeNull();
    const byUrl = Object.fromEntries(alice.dead_letters.map((d: { url: string }) => [d.url, d]));
    expect(byUrl['https://shop.example/a']).toMatchObject({
      source: 'fetch',
      event: 'FetchRequested',
      job_id: aliceJob,
      reason: 'exhausted',
      attempts: 4,
      error_class: 'HttpStatusError',
      error_message: '503 from https://shop.example/a',
      key: 'shop.example',
      origin: { topic: topics.names.fetch, partition: 1, offset: '42' },
      redriven_at: null,
      job_status: 'finished',
    });
    expect(byUrl['https://shop.example/robots-says-no']).toMatchObject({ reason: 'non-retriable', attempts: 1 });
    expect(typeof byUrl['https://shop.example/a'].failed_at).toBe('string');
    const bob = await list('bob');
    expect(bob.dead_letters.map((d: { url: string }) => d.url)).toEqual(['https://news.example/b']);
    expect((await list('carol')).dead_letters).toEqual([]);
    expect((await list('alice', `?job_id=${bobJob}`)).dead_letters).toEqual([]);
    expect((await list('alice', '?source=events')).dead_letters).toEqual([]);
    expect((await list('alice', `?job_id=${aliceJob}&source=fetch`)).dead_letters).toHaveLength(3);
  });

  it('pages newest first with a cursor, each entry once', async () => {
    const all = (await list('alice')).dead_letters.map((d: { id: string }) => d.id);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { dead_letters: { id: string }[]; next_cursor: string | null } = await list('alice', `?limit=1${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.dead_letters.length).toBeLessThanOrEqual(1);
      seen.push(...page.dead_letters.map((d) => d.id));
      cursor = page.next_cursor;
    } while (cursor);
    expect(seen).toEqual(all);
    const bad = await h.app.inject({ method: 'GET', url: '/dead-letters?cursor=bm9wZQ', headers: h.auth('alice') });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toMatchObject({ code: 'VALIDATION_FAILED', field: 'cursor' });
  });

  it('re-drives the original bytes to the origin topic, once', async () => {
    const target = (await list('alice')).dead_letters.find((d: { url: string }) => d.url === 'https://shop.example/a');
    const [original] = (await readTopics(kafka, [topics.names['fetch.dlq']!])).filter((m) => `fetch-${m.partition}-${m.offset}` === target.id);
    expect(original).toBeDefined();

    const res = await redrive('alice', target.id);
    expect(res.statusCode).toBe(202);
    expect(res.json()).toMatchObject({ id: target.id, topic: topics.names.fetch, job_id: aliceJob });

    const republished = await readTopics(kafka, [topics.names.fetch!]);
    expect(republished).toHaveLength(1);
    const m = republished[0]!;
    expect(m.key?.equals(original!.key!)).toBe(true);
    expect(m.value?.equals(original!.value!)).toBe(true);
    const headers = headerStrings(m.headers);
    expect(headers['trawl-redrive-of']).toBe(`${topics.names['fetch.dlq']}/${original!.partition}/${original!.offset}`);
    expect(headers[TRAWL_HEADERS.event]).toBe('FetchRequested');
    for (const gone of [TRAWL_HEADERS.errorClass, TRAWL_HEADERS.errorMessage, TRAWL_HEADERS.deadLetterReason, TRAWL_HEADERS.attempts, TRAWL_HEADERS.originalTopic, TRAWL_HEADERS.attempt]) {
      expect(headers[gone], gone).toBeUndefined();
    }
    const decoded = await codec.decode(m.value);
    expect(decoded.value).toMatchObject({ job_id: aliceJob, url: 'https://shop.example/a' });

    const again = await redrive('alice', target.id);
    expect(again.statusCode).toBe(409);
    expect(again.json().error.code).toBe('ALREADY_REDRIVEN');
    expect((await readTopics(kafka, [topics.names.fetch!])).length).toBe(1);
    const after = (await list('alice')).dead_letters.find((d: { id: string }) => d.id === target.id);
    expect(after.redriven_at).toEqual(expect.any(String));
  });

  it("answers 404 for another user's dead letter and refuses a foreign origin", async () => {
    const bobs = (await list('bob')).dead_letters[0];
    const res = await redrive('alice', bobs.id);
    expect(res.statusCode).toBe(404);
    expect(res.json().error.code).toBe('DEAD_LETTER_NOT_FOUND');
    expect((await redrive('alice', 'fetch-0-999999')).statusCode).toBe(404);
    expect((await redrive('alice', "fetch-0-1'; DROP")).statusCode).toBe(400);
    const foreign = (await list('alice')).dead_letters.find((d: { url: string }) => d.url === 'https://shop.example/foreign');
    const refused = await redrive('alice', foreign.id);
    expect(refused.statusCode).toBe(409);
    expect(refused.json().error.code).toBe('NOT_REDRIVABLE');
    expect((await readTopics(kafka, [topics.names.fetch!])).length).toBe(1);
  });
});
