/**
 * A registry that answers 404 — for everything (restored empty, a wrong URL path, a proxy during a
 * deploy: played by an HTTP proxy switched to 404), or for one id while it serves the others — is
 * waited out, never taken as a verdict on the message: nothing is dead-lettered, the wait shows in
 * the metrics, and the events are processed once the registry answers again. Only bytes that can
 * never decode go to the dead-letter topic.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { samples } from '@trawl/schemas';
import { EventCodec, endpoints, readTopics, runEventConsumer, runProjection, SchemaNotFoundError, type EventConsumer, type Projection } from '@trawl/streams';
import { startHttpProxy, testId, waitFor, withUnknownSchemaId, type HttpProxy } from '@trawl/streams/testing';
import { emitSample, harness, type Harness } from './support.ts';

let h: Harness;
let proxy: HttpProxy;
let db: pg.Pool;

beforeAll(async () => {
  h = await harness('registry-404', ['events', 'projected', 'unknown', 'dlq'].map((name) => ({ name, partitions: 1 })), { postgres: true });
  proxy = await startHttpProxy(endpoints().schemaRegistryUrl);
  db = new pg.Pool({ connectionString: endpoints().databaseUrl, max: 4 });
});

afterAll(async () => {
  await db?.end();
  await proxy?.close();
  await h?.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const deadLetters = async () => (await readTopics(h.kafka, [h.topics.names.dlq!])).length;

describe('a registry answering 404', () => {
  it('for everything: a consumer waits, dead-letters nothing, and processes every event once it answers again', async () => {
    const topic = h.topics.names.events!;
    const seen: string[] = [];
    // A codec that goes through the proxy and has resolved one schema while the registry answered.
    const codec = new EventCodec(proxy.url);
    await codec.decode(await h.codec.encode(topic, 'JobDispatched', samples.JobDispatched));
    proxy.mode = 'not-found';
    for (let i = 0; i < 5; i++) await emitSample(h.producer, 'FetchRequested', { fetch_id: `f-${i}` }, { topic, key: 'k' }, samples.FetchRequested);
    // What the consumer meets: a 404 for the id, and for the id it knows as well.
    const missing = await codec.decode(await h.codec.encode(topic, 'FetchRequested', samples.FetchRequested)).catch((err: unknown) => err);
    expect(missing).toBeInstanceOf(SchemaNotFoundError);
    expect((missing as SchemaNotFoundError).registryServesKnownIds).toBe(false);
    expect((missing as SchemaNotFoundError).retriable).toBe(true);

    const consumer: EventConsumer = await runEventConsumer({
      name: 'registry-404', groupId: testId('g-404'), topics: [topic], deadLetterTopic: h.topics.names.dlq!,
      kafka: h.kafka, logger: h.logger, producer: h.producer, codec, metrics: h.metrics, maxWaitTimeMs: 200,
      retryBackoff: { initialMs: 100, maxMs: 1_000 },
      handler: (event) => {
        if (event.name === 'FetchRequested') seen.push(event.value.fetch_id);
      },
    });
    try {
      await consumer.ready;
      await waitFor(() => consumer.stats().decodeRetries >= 3, { timeoutMs: 20_000, message: () => `decodes retried (${consumer.stats().decodeRetries})` });
      await sleep(2_000);
      expect(seen).toEqual([]);
      expect(await deadLetters()).toBe(0);
      expect(await h.metrics.metrics()).toMatch(/trawl_consumer_decode_retries_total\{consumer="registry-404",error_code="TRAWL_SCHEMA_NOT_FOUND"\} [1-9]/);
      proxy.mode = 'pass';
      await waitFor(() => seen.length === 5, { timeoutMs: 20_000, message: () => `every event processed (${seen.length})` });
      expect(seen.sort()).toEqual(['f-0', 'f-1', 'f-2', 'f-3', 'f-4']);
      expect(await deadLetters()).toBe(0);
    } finally {
      proxy.mode = 'pass';
      await consumer.stop();
    }
  });

  it('for everything: a projection holds its batch, dead-letters nothing, and applies it once the registry answers again', async () => {
    const topic = h.topics.names.projected!;
    const name = testId('p-404');
    const table = `t_${name.replace(/[^a-z0-9]/g, '_')}`;
    for (let i = 0; i < 5; i++) await emitSample(h.producer, 'FetchRequested', { fetch_id: `p-${i}` }, { topic, key: 'k' }, samples.FetchRequested);
    proxy.mode = 'not-found';
    const projection: Projection = await runProjection({
      name, topics: [topic], deadLetterTopic: h.topics.names.dlq!, pool: db, kafka: h.kafka, logger: h.logger, producer: h.producer,
      codec: new EventCodec(proxy.url), metrics: h.metrics, backoff: { initialMs: 100, maxMs: 1_000 },
      setup: (pool) => pool.query(`CREATE TABLE ${table} (id text NOT NULL)`).then(() => undefined),
      apply: async (events, tx) => {
        for (const e of events) if (e.name === 'FetchRequested') await tx.query(`INSERT INTO ${table} VALUES ($1)`, [e.value.fetch_id]);
      },
    });
    const rows = async () => (await db.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}`)).rows[0]!.n;
    try {
      await projection.ready;
      await waitFor(() => projection.stats().decodeRetries >= 3, { timeoutMs: 20_000, message: () => `batches retried (${projection.stats().decodeRetries})` });
      expect(await rows()).toBe('0');
      expect(projection.stats().deadLettered).toBe(0);
      proxy.mode = 'pass';
      await waitFor(async () => (await rows()) === '5', { timeoutMs: 20_000, message: 'every event applied' });
      expect(await deadLetters()).toBe(0);
    } finally {
      proxy.mode = 'pass';
      await projection.stop();
      await db.query(`DROP TABLE IF EXISTS ${table}`);
    }
  });

  it('for one id while it serves the others: the message waits, never dead-lettered; garbage beside it still is', async () => {
    const topic = h.topics.names.unknown!;
    const valid = await h.codec.encode(topic, 'FetchRequested', samples.FetchRequested);
    const unknown = await h.codec.decode(withUnknownSchemaId(valid)).catch((err: unknown) => err);
    expect(unknown).toBeInstanceOf(SchemaNotFoundError);
    expect((unknown as SchemaNotFoundError).registryServesKnownIds).toBe(true);
    await h.producer.sendRaw({ topic, key: 'a', value: withUnknownSchemaId(valid) });
    await h.producer.sendRaw({ topic, key: 'a', value: Buffer.from([0, 0]) });
    await emitSample(h.producer, 'FetchRequested', { fetch_id: 'after' }, { topic, key: 'a' }, samples.FetchRequested);
    const seen: string[] = [];
    const consumer = await runEventConsumer({
      name: 'registry-404-one', groupId: testId('g-404-one'), topics: [topic], deadLetterTopic: h.topics.names.dlq!,
      kafka: h.kafka, logger: h.logger, producer: h.producer, codec: h.codec, metrics: h.metrics, maxWaitTimeMs: 200,
      retryBackoff: { initialMs: 100, maxMs: 1_000 },
      handler: (event) => {
        if (event.name === 'FetchRequested') seen.push(event.value.fetch_id);
      },
    });
    try {
      // The valid event after it is processed; the garbage is dead-lettered; the unknown id waits.
      await waitFor(() => seen.includes('after'), { timeoutMs: 20_000, message: 'the event after the unknown id' });
      await waitFor(() => consumer.stats().decodeRetries >= 3, { timeoutMs: 20_000, message: 'the unknown id retried' });
      const dead = (await readTopics(h.kafka, [h.topics.names.dlq!])).filter((m) => m.headers['trawl-original-topic']?.toString() === topic);
      expect(dead.map((m) => m.value?.length)).toEqual([2]);
      expect(consumer.stats().partitions.find((p) => p.topic === topic)?.pending).toBeGreaterThan(0);
    } finally {
      await consumer.stop();
    }
  });
});
