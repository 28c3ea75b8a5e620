/**
 * A dead letter as the console shows it, from a row of projector-pg's `dead_letters` read model,
 * pure. The entry keeps the raw key, value and headers apart, for a re-drive; they never go out to
 * a browser.
 */
import type { MessageOrigin } from '@trawl/streams';

export type DeadLetterSource = 'fetch' | 'events';

export interface DeadLetterView {
  /** `<source>-<partition>-<offset>`: stable, URL-safe, and says where to find the message. */
  readonly id: string;
  readonly source: DeadLetterSource;
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
  readonly origin: MessageOrigin;
  readonly reason: string | null;
  readonly error_class: string | null;
  readonly error_code: string | null;
  readonly error_message: string | null;
  readonly attempts: number | null;
  /** ISO time it was given up. */
  readonly failed_at: string | null;
  /** The event's name, null when undecodable. */
  readonly event: string | null;
  readonly job_id: string | null;
  readonly url: string | null;
  /** Kafka key as text (the URL host for fetches). */
  readonly key: string | null;
}

export interface DeadLetter {
  readonly view: DeadLetterView;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers: Readonly<Record<string, string>>;
}

export const DEAD_LETTER_ID = /^(fetch|events)-(\d{1,6})-(\d{1,19})$/;

/** A `dead_letters` row as read (bigint offsets as text, bytes as Buffers). */
export interface DeadLetterRecord {
  readonly id: string;
  readonly source: DeadLetterSource;
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
  readonly job_id: string | null;
  readonly event: string | null;
  readonly url: string | null;
  readonly reason: string | null;
  readonly error_class: string | null;
  readonly error_code: string | null;
  readonly error_message: string | null;
  readonly attempts: number | null;
  readonly failed_at: Date;
  readonly origin_topic: string;
  readonly origin_partition: number;
  readonly origin_offset: string;
  readonly key: Buffer | null;
  readonly value?: Buffer | null;
  readonly headers?: Readonly<Record<string, string>>;
}

export function toDeadLetter(r: DeadLetterRecord): DeadLetter {
  return {
    view: {
      id: r.id,
      source: r.source,
      topic: r.topic,
      partition: r.partition,
      offset: String(r.offset),
      origin: { topic: r.origin_topic, partition: r.origin_partition, offset: String(r.origin_offset) },
      reason: r.reason,
      error_class: r.error_class,
      error_code: r.error_code,
      error_message: r.error_message,
      attempts: r.attempts,
      failed_at: r.failed_at.toISOString(),
      event: r.event,
      job_id: r.job_id,
      url: r.url,
      key: r.key ? r.key.toString('utf8') : null,
    },
    key: r.key,
    value: r.value ?? null,
    headers: r.headers ?? {},
  };
}
