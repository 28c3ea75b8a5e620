import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_NAMES, eventSchema, samples, type EventName } from '@trawl/schemas';
import {
  EventCodec,
  EventProducer,
  endpoints,
  httpTarget,
  provisionTopics,
  readEvents,
  readTopics,
  runEventConsumer,
  SchemaRegistryError,
  subjectFor,
  topicCatalogue,
  type ConsumedEvent,
  type TopicSpec,
} from '@trawl/streams';
import { ConfigResourceTypes } from '../src/kafka/kafkajs.ts';
import { startTcpProxy, testId, waitFor } from '@trawl/streams/testing';
import { emitSample, harness, type Harness } from './support.ts';

let h: Harness;
let topic: string;

beforeAll(async () => {
  h = await harness('round-trip', [{ name: 'events', partitions: 3 }, { name: 'ordered' }, { name: 'dlq' }]);
  topic = h.topics.names.events!;
  for (const name of EVENT_NAMES) {
    await emitSample(h.producer, name, {}, { topic, key: `key-${name}` }, samples[name] as never);
  }
});

afterAll(async () => {
  await h?.close();
});

describe('events through Kafka and the registry', () => {
  it('round-trips every event type with equal values', async () => {
    const received = new Map<EventName, ConsumedEvent>();
    const consumer = await runEventConsumer({
      name: 'round-trip',
      groupId: testId('g-round-trip'),
      topics: [topic],
      deadLetterTopic: h.topics.names.dlq!,
      kafka: h.kafka,
      logger: h.logger,
      producer: h.producer,
      metrics: h.metrics,
      handler: (event) => {
        received.set(event.name, event);
      },
    });
    try {
      await waitFor(() => received.size === EVENT_NAMES.length, { message: () => `all event types (got ${[...received.keys()].join(', ')})` });
    } finally {
      await consumer.stop();
    }
    for (const name of EVENT_NAMES) {
      const event = received.get(name)!;
      expect(event.value, name).toEqual(samples[name]);
      expect(event.key).toBe(`key-${name}`);
      expect(event.attempt).toBe(1);
      expect(event.headers['trawl-event']).toBe(name);
    }
  });

  it('decodes only the fields a codec was made to keep, from the registry’s writer schemas', async () => {
    const codec = new EventCodec(undefined, { fields: { PageFetched: ['event_id', 'url', 'render_mode', 'occurred_at'], ItemExtracted: ['item_key'] } });
    const events = await readEvents(h.kafka, codec, [topic]);
    expect(events).toHaveLength(EVENT_NAMES.length);
    for (const { event } of events) {
      if (event.name === 'PageFetched') {
        const { event_id, url, render_mode, occurred_at } = samples.PageFetched;
        expect(event.value).toEqual({ event_id, url, render_mode, occurred_at });
      } else if (event.name === 'ItemExtracted') {
        expect(event.value).toEqual({ item_key: samples.ItemExtracted.item_key });
      } else {
        expect(event.value, event.name).toEqual(samples[event.name]);
      }
    }
  });

  it('writes magic byte 0 and the schema id the registry lists for the subject', async () => {
    const messages = await readTopics(h.kafka, [topic]);
    expect(messages).toHaveLength(EVENT_NAMES.length);
    for (const m of messages) {
      const name = m.headers['trawl-event']!.toString() as EventName;
      const value = m.value!;
      expect(value.readUInt8(0)).toBe(0);
      const registry = httpTarget(`${endpoints().schemaRegistryUrl}/subjects/${encodeURIComponent(subjectFor(topic, name))}/versions/latest`);
      const res = await fetch(registry.url, { headers: registry.authorization ? { authorization: registry.authorization } : {} });
      expect(res.status).toBe(200);
      const latest = (await res.json()) as { id: number };
      expect(value.readInt32BE(1), name).toBe(latest.id);
    }
  });

  it('sends emits in call order, also while the first event of a type registers its schema', async () => {
    const ordered = h.topics.names.ordered!;
    const producer = new EventProducer({ kafka: h.kafka, logger: h.logger, codec: new EventCodec() });
    await producer.connect();
    try {
      await emitSample(producer, 'PageFailed', { event_id: 'first' }, { topic: ordered, key: 'job' }, samples.PageFailed);
      // JobCompleted is new on this topic (a registry round trip); the PageFailed after it is cached.
      await Promise.all([
        emitSample(producer, 'JobCompleted', { event_id: 'second' }, { topic: ordered, key: 'job' }, samples.JobCompleted),
        emitSample(producer, 'PageFailed', { event_id: 'third' }, { topic: ordered, key: 'job' }, samples.PageFailed),
      ]);
    } finally {
      await producer.disconnect();
    }
    const events = await readEvents(h.kafka, h.codec, [ordered]);
    expect(events.map((e) => e.event.value.event_id)).toEqual(['first', 'second', 'third']);
  });

  it('encodes what it prepared while the registry is away, and says the registry is away for the rest', async () => {
    const registry = new URL(endpoints().schemaRegistryUrl);
    const proxy = await startTcpProxy({ host: registry.hostname, port: Number(registry.port) });
    try {
      registry.host = `127.0.0.1:${proxy.port}`;
      const codec = new EventCodec(registry.href.replace(/\/$/, ''));
      await codec.prepare([{ topic, name: 'JobCompleted' }]);
      await proxy.cut();
      const value = { ...samples.JobCompleted, event_id: '00000000-0000-4000-8000-00000000c0de' };
      const bytes = await codec.encode(topic, 'JobCompleted', value);
      expect((await h.codec.decode(bytes)).value).toEqual(value);
      await expect(codec.encode(topic, 'JobFailed', samples.JobFailed)).rejects.toMatchObject({ retriable: true });
    } finally {
      await proxy.close();
    }
  });

  it('registers a new subject from several processes at once (the compatibility setting races)', async () => {
    const schema = eventSchema('JobFailed');
    for (let round = 0; round < 5; round++) {
      const subject = `${topic}-race-${round}-dev.trawl.events.JobFailed`;
      const ids = await Promise.all([new EventCodec(), new EventCodec(), new EventCodec()].map((c) => c.registerSchema(subject, schema)));
      expect(new Set(ids).size, subject).toBe(1);
    }
  });

  it('refuses an incompatible schema change with a non-retriable SchemaRegistryError', async () => {
    const subject = subjectFor(topic, 'JobFailed');
    await h.codec.schemaId(topic, 'JobFailed');
    const original = eventSchema('JobFailed') as { fields: object[] };
    // A new required field without a default: the new schema cannot read old data (not BACKWARD).
    const broken = { ...original, fields: [...original.fields, { name: 'severity', type: 'string' }] };
    const err = await h.codec.registerSchema(subject, broken).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SchemaRegistryError);
    expect((err as SchemaRegistryError).retriable).toBe(false);
    expect((err as SchemaRegistryError).code).toBe('TRAWL_SCHEMA_REGISTRY');
    expect(((err as Error).cause as { status?: number }).status).toBe(409);
  });
});

describe('topics', () => {
  async function describeTopics(names: readonly string[]) {
    const admin = h.kafka.admin();
    await admin.connect();
    try {
      const meta = await admin.fetchTopicMetadata({ topics: [...names] });
      const configs = await admin.describeConfigs({
        includeSynonyms: false,
        resources: names.map((name) => ({ type: ConfigResourceTypes.TOPIC, name, configNames: ['retention.ms', 'cleanup.policy'] })),
      });
      return new Map(
        names.map((name) => {
          const entries = configs.resources.find((r) => r.resourceName === name)!.configEntries;
          const config = (k: string) => entries.find((e) => e.configName === k)?.configValue;
          return [name, { partitions: meta.topics.find((t) => t.name === name)!.partitions.length, retention: config('retention.ms'), cleanup: config('cleanup.policy') }];
        }),
      );
    }
    finally {
      await admin.disconnect();
    }
  }

  function expectMatches(spec: TopicSpec, actual: { partitions: number; retention?: string; cleanup?: string } | undefined) {
    expect(actual, spec.name).toBeDefined();
    expect(actual!.partitions, spec.name).toBe(spec.partitions);
    expect(actual!.retention, spec.name).toBe(spec.configs['retention.ms']);
    expect(actual!.cleanup, spec.name).toBe(spec.configs['cleanup.policy']);
    if (spec.role === 'event' || spec.role === 'dead-letter') expect(actual!.retention, spec.name).toBe('-1');
  }

  it('provisioning creates the catalogue with its partitions and retention, and is idempotent', async () => {
    const prefix = `test.${testId('prov')}.`;
    const specs = topicCatalogue().map((s) => ({ ...s, name: prefix + s.name }));
    try {
      const first = await provisionTopics(h.kafka, specs);
      expect(first.created.sort()).toEqual(specs.map((s) => s.name).sort());
      const actual = await describeTopics(specs.map((s) => s.name));
      for (const spec of specs) expectMatches(spec, actual.get(spec.name));
      const again = await provisionTopics(h.kafka, specs);
      expect(again.created).toEqual([]);
      expect(again.unchanged.sort()).toEqual(specs.map((s) => s.name).sort());
      // One broker: one copy, writes acknowledged by it alone, as before (three brokers: chaos/brokers3.test.ts).
      expect([again.brokers, again.replication, again.underReplicated]).toEqual([1, { factor: 1, minInsyncReplicas: 1 }, []]);
      for (const spec of specs) expect(again.topics[spec.name], spec.name).toEqual({ factor: 1, minInsyncReplicas: 1 });
    } finally {
      const admin = h.kafka.admin();
      await admin.connect();
      await admin.deleteTopics({ topics: specs.map((s) => s.name) }).catch(() => {});
      await admin.disconnect();
    }
  });

  it("the stack's topics match the catalogue (event topics never expire)", async () => {
    const specs = topicCatalogue();
    const actual = await describeTopics(specs.map((s) => s.name));
    for (const spec of specs) expectMatches(spec, actual.get(spec.name));
  });
});
