/**
 * Dead letters on the real Kafka, registry and Postgres: each user sees the dead letters of their
 * own jobs only (undecodable ones nobody), and a re-drive republishes the original key and value
 * bytes to the origin topic, once.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { samples } from '@trawl/schemas';
import { deadLetterFor, EventCodec, EventProducer, headerStrings, readTopics, TRAWL_HEADERS } from '@trawl/streams';
import { createTestTopics, deleteSubjects, requireStack, testKafka, testLogger, type TestTopics } from '@trawl/streams/testing';
import { consoleHarness, type ConsoleHarness } from './support/console-harness.ts';

const logger = testLogger('console-dlq');
const kafka = testKafka('console-dlq', logger);
const codec = new EventCodec();
let topics: TestTopics;
let producer: EventProducer;
let h: ConsoleHarness;
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
}

beforeAll(async () => {
  await requireStack({ kafka: true, registry: true, postgres: true });
  topics = await createTestTopics(kafka, [{ name: 'fetch', partitions: 2 }, { name: 'fetch.dlq', partitions: 2 }, { name: 'events.dlq' }]);
  producer = new EventProducer({ kafka, logger, codec });
  await producer.connect();
  h = await consoleHarness({
    kafka,
    codec,
    producer,
    deadLetterTopics: { fetch: topics.names['fetch.dlq']!, events: topics.names['events.dlq']! },
    redriveTopics: [topics.names.fetch!],
    deadLetterCacheMs: 0,
  });
  await h.ownJob('alice', aliceJob);
  await h.ownJob('bob', bobJob);
  await deadLetter(aliceJob, 'https://shop.example/a');
  await deadLetter(aliceJob, 'https://shop.example/robots-says-no', { reason: 'non-retriable', attempts: 1 });
  await deadLetter(bobJob, 'https://news.example/b');
  await deadLetter(aliceJob, 'https://shop.example/foreign', { origin: 'not-a-trawl-topic' });
  // Undecodable: no job, so nobody's.
  await producer.sendRaw({ topic: topics.names['events.dlq']!, key: null, value: Buffer.from('garbage'), headers: { [TRAWL_HEADERS.deadLetterReason]: 'undecodable' } });
}, 60_000);

afterAll(async () => {
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
    expect(alice.total).toBe(3);
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
    });
    expect(byUrl['https://shop.example/robots-says-no']).toMatchObject({ reason: 'non-retriable', attempts: 1 });
    expect(typeof byUrl['https://shop.example/a'].failed_at).toBe('string');
    const bob = await list('bob');
    expect(bob.dead_letters.map((d: { url: string }) => d.url)).toEqual(['https://news.example/b']);
    expect((await list('carol')).total).toBe(0);
    expect((await list('alice', `?job_id=${bobJob}`)).total).toBe(0);
    expect((await list('alice', '?source=events')).total).toBe(0);
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
