/**
 * A dead letter as the `dead_letters` read model stores it, from the message and its headers
 * (streams' retry/retry-headers.ts), pure: the value is decoded elsewhere. The raw key, value and
 * headers are kept too, for a re-drive; they never go out to a browser.
 */
import { TRAWL_HEADERS, type ProjectedMessage } from '@trawl/streams';

export type DeadLetterSource = 'fetch' | 'events';

export interface DeadLetterRow {
  /** `<source>-<partition>-<offset>`: stable, URL-safe, and says where to find the message. */
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
  /** When it was given up (its header), else when the dead letter was written. */
  readonly failed_at: Date;
  readonly origin_topic: string;
  readonly origin_partition: number;
  readonly origin_offset: string;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers: Readonly<Record<string, string>>;
}

/** What the decoder found in the value: nothing for an undecodable message. */
export interface DecodedValue {
  readonly name: string;
  readonly value: Readonly<Record<string, unknown>>;
}

function intOrNull(v: string | undefined): number | null {
  if (v === undefined || !/^\d{1,16}$/.test(v)) return null;
  return Number(v);
}

const str = (x: unknown): string | null => (typeof x === 'string' ? x : null);

/** Text Postgres can store: NUL is refused in text columns, so it is dropped. */
function text(v: string | null | undefined): string | null {
  return v === undefined || v === null ? null : v.replaceAll('\u0000', '');
}

export function deadLetterRow(source: DeadLetterSource, m: ProjectedMessage, decoded: DecodedValue | undefined): DeadLetterRow {
  const h = m.headers;
  const failedAt = intOrNull(h[TRAWL_HEADERS.failedAt]) ?? intOrNull(m.timestamp) ?? 0;
  const originPartition = intOrNull(h[TRAWL_HEADERS.originalPartition]);
  const originOffset = h[TRAWL_HEADERS.originalOffset];
  const hasOrigin = Boolean(h[TRAWL_HEADERS.originalTopic]) && originPartition !== null && originOffset !== undefined && /^\d{1,19}$/.test(originOffset);
  const v = decoded?.value;
  return {
    id: `${source}-${m.partition}-${m.offset}`,
    source,
    topic: m.topic,
    partition: m.partition,
    offset: m.offset,
    job_id: text(str(v?.job_id)),
    event: decoded?.name ?? null,
    url: text(str(v?.url)),
    reason: text(h[TRAWL_HEADERS.deadLetterReason]),
    error_class: text(h[TRAWL_HEADERS.errorClass]),
    error_code: text(h[TRAWL_HEADERS.errorCode]),
    error_message: text(h[TRAWL_HEADERS.errorMessage]),
    attempts: intOrNull(h[TRAWL_HEADERS.attempts]),
    failed_at: new Date(failedAt),
    origin_topic: hasOrigin ? text(h[TRAWL_HEADERS.originalTopic])! : m.topic,
    origin_partition: hasOrigin ? originPartition! : m.partition,
    origin_offset: hasOrigin ? originOffset! : m.offset,
    key: m.key,
    value: m.value,
    headers: Object.fromEntries(Object.entries(h).map(([k, x]) => [text(k)!, text(x)!])),
  };
}
