/**
 * A service's producer, ready to emit: the topic catalogue provisioned (idempotent: a broker set up
 * before a topic existed gets it), the producer's delivery settings checked against the topics'
 * replication (delivery.ts), the producer connected, and the schemas of the events the
 * service emits resolved in the background while the registry is known to answer, so that a
 * registry outage later holds up none of their first events. A failed resolution is only logged:
 * each schema is then resolved on first use.
 */
import type { Kafka } from 'kafkajs';
import type { Logger } from 'pino';
import type { EventName } from '@trawl/schemas';
import type { EventCodec } from '../registry/event-codec.ts';
import { provisionTopics } from '../topics/provision.ts';
import { checkDelivery } from './delivery.ts';
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
  const topics = await provisionTopics(kafka);
  const producer = new EventProducer({ kafka, logger, ...(codec ? { codec } : {}) });
  // Before the first event: settings that could lose an acknowledged write on this cluster stop the service here.
  const guaranteed = checkDelivery(producer.delivery, topics.topics);
  logger.info(
    { brokers: topics.brokers, replicationFactor: guaranteed.minFactor, minInsyncReplicas: guaranteed.minInsyncReplicas, acks: producer.delivery.acks, idempotent: producer.delivery.idempotent },
    'producer settings fit the topics',
  );
  if (topics.underReplicated.length > 0) {
    logger.warn({ topics: topics.underReplicated, replicationFactor: topics.replication.factor }, 'topics have fewer copies than the catalogue asks of this cluster; reassign their partitions');
  }
  await producer.connect();
  producer.prepare(emits).catch((err: unknown) => logger.warn({ err }, 'schemas not resolved ahead; they will be on first use'));
  return producer;
}
