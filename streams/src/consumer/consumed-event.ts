/**
 * What consumers receive: the decoded event with its place in the log (`ReadEvent`: what a
 * projection's `apply` and a live feed get) and, for a work handler, its delivery (`ConsumedEvent`:
 * attempt, origin, signal). Discriminated unions on `name`, so `if (event.name === 'PageFetched')`
 * narrows `value`.
 */
import type { KafkaMessage } from 'kafkajs';
import type { EventMap, EventName } from '@trawl/schemas';
import type { DecodedEvent } from '../registry/event-codec.ts';
import { headerStrings, type MessageOrigin } from '../retry/retry-headers.ts';

export interface ReadEventOf<N extends EventName> {
  readonly name: N;
  readonly value: EventMap[N];
  readonly schemaId: number;
  /** Where this delivery was read (for a work handler, a retry tier topic from the second attempt on). */
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
  /** The message key as UTF-8 (a job id, a host), or null. */
  readonly key: string | null;
  readonly headers: Readonly<Record<string, string>>;
  /** Kafka's message timestamp (epoch ms, as a string). */
  readonly timestamp: string;
}

export type ReadEvent = { [N in EventName]: ReadEventOf<N> }[EventName];

/** The event decoded from `message`, read from `topic`/`partition`. */
export function readEvent(decoded: DecodedEvent, topic: string, partition: number, message: KafkaMessage): ReadEvent {
  return {
    name: decoded.name,
    value: decoded.value,
    schemaId: decoded.schemaId,
    topic,
    partition,
    offset: message.offset,
    key: message.key ? message.key.toString('utf8') : null,
    headers: headerStrings(message.headers),
    timestamp: message.timestamp,
  } as ReadEvent;
}

export interface ConsumedEventOf<N extends EventName> extends ReadEventOf<N> {
  /** Where the message was first read (equal to topic/partition/offset on attempt 1). */
  readonly origin: MessageOrigin;
  /** 1 on the first delivery; n+1 when read from retry tier n. */
  readonly attempt: number;
  /**
   * Aborted when the consumer gives this message up: its partition moved to another member, or
   * shutdown's drain time ran out. The message will be processed again elsewhere; long work
   * (a page fetch) should stop.
   */
  readonly signal: AbortSignal;
}

export type ConsumedEvent = { [N in EventName]: ConsumedEventOf<N> }[EventName];

/**
 * Processes one event. Resolve when its effects are durable; throw to fail it. Errors with
 * `retriable: false` (NonRetriableError) go to the dead-letter topic at once; any other error is
 * retried (retry tiers, or in place when the consumer has none).
 */
export type EventHandler = (event: ConsumedEvent) => Promise<void> | void;
