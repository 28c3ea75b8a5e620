/**
 * A dead letter as the console shows it, from the Kafka message and its headers (streams'
 * retry/retry-headers.ts). Pure: the message is decoded elsewhere. The entry keeps the raw key,
 * value and headers apart, for a re-drive; they never go out to a browser.
 */
import { headerStrings, TRAWL_HEADERS, type LoggedMessage, type MessageOrigin } from '@trawl/streams';

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

export function deadLetterId(source: DeadLetterSource, partition: number, offset: string): string {
  return `${source}-${partition}-${offset}`;
}

function intOrNull(v: string | undefined): number | null {
  if (v === undefined || !/^\d{1,16}$/.test(v)) return null;
  return Number(v);
}

/** What the decoder found in the value: nothing for an undecodable message. */
export interface DecodedValue {
  readonly name: string;
  readonly value: Readonly<Record<string, unknown>>;
}

export function toDeadLetter(source: DeadLetterSource, m: LoggedMessage, decoded: DecodedValue | undefined): DeadLetter {
  const h = headerStrings(m.headers);
  const failedAt = intOrNull(h[TRAWL_HEADERS.failedAt]);
  const originPartition = intOrNull(h[TRAWL_HEADERS.originalPartition]);
  const originOffset = h[TRAWL_HEADERS.originalOffset];
  const origin: MessageOrigin =
    h[TRAWL_HEADERS.originalTopic] && originPartition !== null && originOffset && /^\d+$/.test(originOffset)
      ? { topic: h[TRAWL_HEADERS.originalTopic]!, partition: originPartition, offset: originOffset }
      : { topic: m.topic, partition: m.partition, offset: m.offset };
  const v = decoded?.value;
  const str = (x: unknown) => (typeof x === 'string' ? x : null);
  return {
    view: {
      id: deadLetterId(source, m.partition, m.offset),
      source,
      topic: m.topic,
      partition: m.partition,
      offset: m.offset,
      origin,
      reason: h[TRAWL_HEADERS.deadLetterReason] ?? null,
      error_class: h[TRAWL_HEADERS.errorClass] ?? null,
      error_code: h[TRAWL_HEADERS.errorCode] ?? null,
      error_message: h[TRAWL_HEADERS.errorMessage] ?? null,
      attempts: intOrNull(h[TRAWL_HEADERS.attempts]),
      failed_at: failedAt === null ? null : new Date(failedAt).toISOString(),
      event: decoded?.name ?? null,
      job_id: str(v?.job_id),
      url: str(v?.url),
      key: m.key ? m.key.toString('utf8') : null,
    },
    key: m.key,
    value: m.value,
    headers: h,
  };
}
