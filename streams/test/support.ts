/**
 * Shared set-up of the integration tests: the stack must answer, each file gets its own topics,
 * a codec, a producer and a registry of metrics, and everything is closed afterwards.
 */
import type { Kafka } from 'kafkajs';
import type { Logger } from 'pino';
import type { EventMap, EventName } from '@trawl/schemas';
import { EventCodec, EventProducer, MetricsRegistry, type RouteOptions } from '@trawl/streams';
import { createTestTopics, deleteSubjects, requireStack, testKafka, testLogger, type TestTopicSpec, type TestTopics } from '@trawl/streams/testing';

export interface Harness {
  readonly kafka: Kafka;
  readonly logger: Logger;
  readonly codec: EventCodec;
  readonly producer: EventProducer;
  readonly metrics: MetricsRegistry;
  readonly topics: TestTopics;
  close(): Promise<void>;
}

export async function harness(name: string, topics: readonly TestTopicSpec[], needs = { postgres: false }): Promise<Harness> {
  await requireStack({ kafka: true, registry: true, postgres: needs.postgres });
  const logger = testLogger(name);
  const kafka = testKafka(name, logger);
  const codec = new EventCodec();
  const producer = new EventProducer({ kafka, logger, codec });
  await producer.connect();
  const created = await createTestTopics(kafka, topics);
  return {
    kafka,
    logger,
    codec,
    producer,
    metrics: new MetricsRegistry(),
    topics: created,
    async close() {
      await producer.disconnect();
      await created.delete();
      await deleteSubjects(created.prefix);
    },
  };
}

/** Emits a copy of the schemas' sample of `name` with the given job id / fetch id / url, keyed by `key`. */
export function emitSample<N extends EventName>(
  producer: EventProducer,
  name: N,
  overrides: Partial<EventMap[N]>,
  options: RouteOptions & { topic: string },
  base: EventMap[N],
): Promise<string> {
  return producer.emitEvent(name, { ...base, ...overrides }, options);
}
