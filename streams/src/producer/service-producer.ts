/**
 * A service's producer, ready to emit: the topic catalogue provisioned (idempotent: a broker set up
 * before a topic existed gets it), the producer connected, and the schemas of the events the
 * service emits resolved in the background while the registry is known to answer, so that a
 * registry outage later holds up none of their first events. A failed resolution is only logged:
 * each schema is then resolved on first use.
 */
import type { Kafka } from 'kafkajs';
import type { Logger } from 'pino';
import type { EventName } from '@trawl/schemas';
import type { EventCodec } from '../registry/event-codec.ts';
import { provisionTopics } from '../topics/provision.ts';
import { EventProducer } from './event-producer.ts';

export interface ServiceProducerOptions {
  readonly kafka: Kafka;
  readonly logger: Logger;
  /** The events the service emits, resolved ahead. */
  readonly emits: readonly EventName[];
  /** Shared with the service's consumers, so each schema is resolved once per process. */
  readonly codec?: EventCodec;
}

export async function startServiceProducer({ kafka, logger, emits, codec }: ServiceProducerOptions): Promise<EventProducer> {
  await provisionTopics(kafka);
  const producer = new EventProducer({ kafka, logger, ...(codec ? { codec } : {}) });
  await producer.connect();
  producer.prepare(emits).catch((err: unknown) => logger.warn({ err }, 'schemas not resolved ahead; they will be on first use'));
  return producer;
}
