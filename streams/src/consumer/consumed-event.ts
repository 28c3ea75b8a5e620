/**
 * What a handler receives: the decoded event with its place in the log and its delivery attempt.
 * A discriminated union on `name`, so `if (event.name === 'PageFetched')` narrows `value`.
 */
import type { EventMap, EventName } from '@trawl/schemas';
import type { MessageOrigin } from '../retry/retry-headers.ts';

export interface ConsumedEventOf<N extends EventName> {
  readonly name: N;
  readonly value: EventMap[N];
  readonly schemaId: number;
  /** Where this delivery was read (a retry tier topic from the second attempt on). */
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
  /** Where the message was first read (equal to topic/partition/offset on attempt 1). */
  readonly origin: MessageOrigin;
  /** The message key as UTF-8 (a job id, a host), or null. */
  readonly key: string | null;
  readonly headers: Readonly<Record<string, string>>;
  /** Kafka's message timestamp (epoch ms, as a string). */
  readonly timestamp: string;
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
