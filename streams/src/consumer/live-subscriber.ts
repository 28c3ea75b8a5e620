/**
 * subscribeLive: the API's live feed. Reads events from the moment it joins, in a throw-away
 * group, committing nothing: a feed to watch, not work to do. So it does not use the parallel
 * runner — no retries, no dead letters, no commits — and a slow or failing listener only ever
 * loses its own view (errors are logged and the feed moves on).
 *
 * A live view starts "about now": `ready` resolves once the group has joined and its first fetch
 * has answered, i.e. once every assigned partition's "latest" position was resolved, so an event
 * produced after `ready` is delivered. Events produced before it may be missed. Undecodable
 * messages are skipped with a warning (the projectors dead-letter them).
 */
import { randomUUID } from 'node:crypto';
import type { Kafka } from 'kafkajs';
import type { Logger } from 'pino';
import type { EventName } from '@trawl/schemas';
import { createKafka } from '../kafka/client.ts';
import { createLogger } from '../logger.ts';
import { EventCodec } from '../registry/event-codec.ts';
import { headerStrings } from '../retry/retry-headers.ts';
import type { ConsumedEventOf } from './consumed-event.ts';

/** A live event: what a handler gets, without the delivery bookkeeping (attempt, origin, signal). */
export type LiveEvent = { [N in EventName]: Omit<ConsumedEventOf<N>, 'signal' | 'attempt' | 'origin'> }[EventName];

export interface LiveSubscriptionOptions {
  readonly topics: readonly string[];
  readonly onEvent: (event: LiveEvent) => void | Promise<void>;
  /** Only these events reach onEvent (all when absent). */
  readonly names?: readonly EventName[];
  readonly kafka?: Kafka;
  readonly codec?: EventCodec;
  readonly logger?: Logger;
  /** Prefix of the throw-away group id. */
  readonly groupPrefix?: string;
}

export interface LiveSubscription {
  /** Resolves when the feed has its positions: every event produced from then on is delivered. */
  readonly ready: Promise<void>;
  stop(): Promise<void>;
}

export async function subscribeLive(options: LiveSubscriptionOptions): Promise<LiveSubscription> {
  const logger = (options.logger ?? createLogger('live-feed')).child({ component: 'live-feed' });
  const kafka = options.kafka ?? createKafka({ clientId: 'trawl-live', logger });
  const codec = options.codec ?? new EventCodec();
  const wanted = options.names ? new Set<string>(options.names) : undefined;
  const consumer = kafka.consumer({ groupId: `${options.groupPrefix ?? 'trawl-live'}-${randomUUID()}`, maxWaitTimeInMs: 250 });
  let resolveReady!: () => void;
  const ready = new Promise<void>((r) => (resolveReady = r));
  // kafkajs resolves a partition's "latest" offset inside its first fetch from the partition's
  // leader: ready once every broker fetched from after the join has answered once.
  let joined = false;
  const fetching = new Set<number>();
  const answered = new Set<number>();
  consumer.on(consumer.events.GROUP_JOIN, () => {
    joined = true;
    fetching.clear();
    answered.clear();
  });
  consumer.on(consumer.events.FETCH_START, ({ payload }) => {
    if (joined) fetching.add(payload.nodeId);
  });
  consumer.on(consumer.events.FETCH, ({ payload }) => {
    if (!joined || !fetching.has(payload.nodeId)) return;
    answered.add(payload.nodeId);
    if (answered.size === fetching.size) resolveReady();
  });
  await consumer.connect();
  await consumer.subscribe({ topics: [...options.topics], fromBeginning: false });
  await consumer.run({
    autoCommit: false,
    eachMessage: async ({ topic, partition, message }) => {
      let decoded;
      try {
        decoded = await codec.decode(message.value);
      } catch (err) {
        logger.warn({ err, topic, partition, offset: message.offset }, 'live feed skips an undecodable message');
        return;
      }
      if (wanted && !wanted.has(decoded.name)) return;
      try {
        await options.onEvent({
          name: decoded.name,
          value: decoded.value,
          schemaId: decoded.schemaId,
          topic,
          partition,
          offset: message.offset,
          key: message.key ? message.key.toString('utf8') : null,
          headers: headerStrings(message.headers),
          timestamp: message.timestamp,
        } as LiveEvent);
      } catch (err) {
        logger.warn({ err, topic, offset: message.offset }, 'live feed listener failed');
      }
    },
  });
  return {
    ready,
    stop: async () => {
      resolveReady();
      await consumer.disconnect();
    },
  };
}
