/**
 * subscribeLive: the live-view strategy of the group-member runtime (group-member.ts), behind the
 * API's live feed and the worker's list of ended jobs. Reads events from the moment it joins, in a
 * throw-away group, committing nothing: a feed to watch, not work to do. So no retries, no dead
 * letters, no commits, no delivery counting — and a slow or failing listener only ever loses its
 * own view (errors are logged and the feed moves on).
 *
 * A live view starts "about now": `ready` resolves once the group has joined and its first fetch
 * has answered (the runtime's `positioned`), so an event produced after `ready` is delivered.
 * Events produced before it may be missed. Undecodable messages are skipped with a warning (the
 * projectors dead-letter them); events not in `names` are skipped without decoding their bodies.
 */
import { randomUUID } from 'node:crypto';
import type { EachBatchPayload, Kafka, KafkaMessage } from 'kafkajs';
import type { Logger } from 'pino';
import type { EventName } from '@trawl/schemas';
import { createKafka } from '../kafka/client.ts';
import { createLogger } from '@trawl/base';
import { EventCodec } from '../registry/event-codec.ts';
import { readEvent, type ReadEvent } from './consumed-event.ts';
import { startGroupMember, type MemberRuntime, type MemberStrategy } from './group-member.ts';

/** A live event: what a handler gets, without the delivery bookkeeping (attempt, origin, signal). */
export type LiveEvent = ReadEvent;

export interface LiveSubscriptionOptions {
  readonly topics: readonly string[];
  readonly onEvent: (event: LiveEvent) => void | Promise<void>;
  /** Only these events reach onEvent (all when absent); the others are not decoded. */
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

class LiveView implements MemberStrategy<undefined> {
  private readonly codec: EventCodec;
  private readonly wanted: ReadonlySet<EventName> | undefined;

  constructor(
    private readonly options: LiveSubscriptionOptions,
    private readonly runtime: MemberRuntime,
  ) {
    this.codec = options.codec ?? new EventCodec();
    this.wanted = options.names ? new Set(options.names) : undefined;
  }

  describe(): object {
    return { topics: this.options.topics };
  }

  async onBatch(payload: EachBatchPayload): Promise<void> {
    const { topic, partition, messages } = payload.batch;
    for (const message of messages) {
      if (!payload.isRunning() || payload.isStale() || this.runtime.stopping.aborted) break;
      await this.deliver(topic, partition, message);
      payload.resolveOffset(message.offset);
    }
  }

  private async deliver(topic: string, partition: number, message: KafkaMessage): Promise<void> {
    const { logger } = this.runtime;
    let decoded;
    try {
      decoded = this.wanted ? await this.codec.decodeIf(message.value, this.wanted) : await this.codec.decode(message.value);
    } catch (err) {
      logger.warn({ err, topic, partition, offset: message.offset }, 'live feed skips an undecodable message');
      return;
    }
    if (!decoded) return;
    try {
      await this.options.onEvent(readEvent(decoded, topic, partition, message));
    } catch (err) {
      logger.warn({ err, topic, offset: message.offset }, 'live feed listener failed');
    }
  }

  onAssigned(): void {}

  onCrash(): void {}

  stats(): undefined {
    return undefined;
  }

  async close(): Promise<void> {}
}

export async function subscribeLive(options: LiveSubscriptionOptions): Promise<LiveSubscription> {
  const logger = (options.logger ?? createLogger('live-feed')).child({ component: 'live-feed' });
  const kafka = options.kafka ?? createKafka({ clientId: 'trawl-live', logger });
  const name = options.groupPrefix ?? 'trawl-live';
  return startGroupMember(
    {
      kind: 'live feed',
      work: 'listeners',
      name,
      kafka,
      logger,
      consumer: { groupId: `${name}-${randomUUID()}`, maxWaitTimeInMs: 250 },
      subscriptions: [{ topics: options.topics, fromBeginning: false }],
      partitionsConsumedConcurrently: 1,
      // kafkajs's default; a listener holds a batch for moments.
      heartbeatIntervalMs: 3_000,
      drainTimeoutMs: 30_000,
      readyWhen: 'positioned',
      quiet: true,
    },
    (runtime) => new LiveView(options, runtime),
  );
}
