/**
 * What a re-drive sends: the dead letter's original key and value bytes, to its origin topic,
 * as a first attempt. The retry and dead-letter headers are dropped (a re-driven message starts
 * its retries afresh, and a new failure records its own origin); `trawl-redrive-of` says where it
 * came from, so a message that fails again can be traced to its earlier dead letter.
 */
import { TRAWL_HEADERS, type RawMessage } from '@trawl/streams';
import type { DeadLetter } from './dead-letter-entry.ts';

export const REDRIVE_HEADER = 'trawl-redrive-of';

const DROPPED: ReadonlySet<string> = new Set([
  TRAWL_HEADERS.attempt,
  TRAWL_HEADERS.dueAt,
  TRAWL_HEADERS.errorClass,
  TRAWL_HEADERS.errorCode,
  TRAWL_HEADERS.errorMessage,
  TRAWL_HEADERS.originalTopic,
  TRAWL_HEADERS.originalPartition,
  TRAWL_HEADERS.originalOffset,
  TRAWL_HEADERS.attempts,
  TRAWL_HEADERS.deadLetterReason,
  TRAWL_HEADERS.failedAt,
  REDRIVE_HEADER,
]);

/** `<dlq topic>/<partition>/<offset>`: the dead letter's position, its identity across re-drives. */
export function deadLetterPosition(d: DeadLetter): string {
  return `${d.view.topic}/${d.view.partition}/${d.view.offset}`;
}

/**
 * The message to republish, or undefined when the origin is not one of `allowedTopics`: a header
 * is data, and data must not choose where the console writes.
 */
export function redriveRecord(d: DeadLetter, allowedTopics: ReadonlySet<string>): RawMessage | undefined {
  if (!allowedTopics.has(d.view.origin.topic)) return undefined;
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(d.headers)) if (!DROPPED.has(k)) headers[k] = v;
  headers[REDRIVE_HEADER] = deadLetterPosition(d);
  return { topic: d.view.origin.topic, key: d.key, value: d.value, headers };
}
