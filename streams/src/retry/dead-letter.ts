/**
 * Dead letters and retry forwards as Kafka messages. Both carry the original key and value bytes
 * untouched and describe what happened in headers (see retry-headers.ts), so a dead letter can be
 * inspected with any Kafka tool and replayed onto its original topic as it is.
 */
import type { IHeaders } from 'kafkajs';
import type { DecodedEvent } from '../registry/event-codec.ts';
import type { RawMessage } from '../producer/event-producer.ts';
import {
  deadLetterHeaders,
  describeError,
  headerStrings,
  originOf,
  deferHeaders,
  retryHeaders,
  type DeadLetterReason,
  type MessageOrigin,
} from './retry-headers.ts';

/** A message as read, before decoding. */
export interface SourceMessage {
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers: IHeaders | undefined;
}

/** What `onDeadLetter` receives once the dead letter is safely written. */
export interface DeadLetter {
  readonly reason: DeadLetterReason;
  /** The topic the dead letter was written to. */
  readonly deadLetterTopic: string;
  /** Where the message was read when it was given up (a retry tier, or the source). */
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
  /** Where it was first read. */
  readonly origin: MessageOrigin;
  /** Processing attempts made, including the last. */
  readonly attempts: number;
  readonly error: unknown;
  readonly errorClass: string;
  readonly errorMessage: string;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers: Readonly<Record<string, string>>;
  /** The decoded event, unless the reason is that it could not be decoded. */
  readonly event: DecodedEvent | undefined;
}

function here(m: SourceMessage): MessageOrigin {
  return { topic: m.topic, partition: m.partition, offset: m.offset };
}

export function deadLetterFor(
  m: SourceMessage,
  info: { readonly deadLetterTopic: string; readonly reason: DeadLetterReason; readonly attempts: number; readonly error: unknown; readonly event?: DecodedEvent },
  now: number = Date.now(),
): { readonly record: RawMessage; readonly deadLetter: DeadLetter } {
  const err = describeError(info.error);
  const headers = deadLetterHeaders(m.headers, here(m), { attempts: info.attempts, reason: info.reason, failedAt: now }, err);
  return {
    record: { topic: info.deadLetterTopic, key: m.key, value: m.value, headers },
    deadLetter: {
      reason: info.reason,
      deadLetterTopic: info.deadLetterTopic,
      topic: m.topic,
      partition: m.partition,
      offset: m.offset,
      origin: originOf(m.headers, here(m)),
      attempts: info.attempts,
      error: info.error,
      errorClass: err.errorClass,
      errorMessage: err.message,
      key: m.key,
      value: m.value,
      headers: headerStrings(headers),
      event: info.event,
    },
  };
}

export function retryRecordFor(m: SourceMessage, tierTopic: string, next: { readonly attempt: number; readonly dueAt: number; readonly unfinished?: number }, error: unknown): RawMessage {
  return { topic: tierTopic, key: m.key, value: m.value, headers: retryHeaders(m.headers, here(m), next, describeError(error)) };
}

/** The message parked in a retry tier until `dueAt`, as the same attempt (see DeferredError). */
export function deferredRecordFor(m: SourceMessage, tierTopic: string, next: { readonly attempt: number; readonly dueAt: number; readonly unfinished: number }): RawMessage {
  return { topic: tierTopic, key: m.key, value: m.value, headers: deferHeaders(m.headers, here(m), next) };
}
