/**
 * The headers a message carries on its way through retry tiers and into a dead-letter topic.
 * Key and value are never touched: a retried or dead-lettered message holds the original bytes,
 * so whatever went wrong can be replayed byte for byte.
 */
import { headerString } from '@trawl/base';
import type { IHeaders } from 'kafkajs';

export const TRAWL_HEADERS = {
  /** Event name, set by the producer; informative only (the schema id decides). */
  event: 'trawl-event',
  /** The attempt the next delivery is (1 for the first; a message in tier n carries n+1). */
  attempt: 'trawl-attempt',
  /** Epoch ms before which a retry tier's consumer must not run the message. */
  dueAt: 'trawl-due-at',
  errorClass: 'trawl-error-class',
  errorCode: 'trawl-error-code',
  errorMessage: 'trawl-error-message',
  /** Where the message was first read; kept unchanged through every tier. */
  originalTopic: 'trawl-original-topic',
  originalPartition: 'trawl-original-partition',
  originalOffset: 'trawl-original-offset',
  /**
   * Deliveries of the message that ended without an outcome (its process died, or it overran its
   * budget), carried from one retry tier to the next so that the count survives the hop.
   */
  unfinishedDeliveries: 'trawl-unfinished-deliveries',
  /** Times the message was parked to wait for its due time (DeferredError); never counted as attempts. */
  deferrals: 'trawl-deferrals',
  /** Dead letters only: how many times processing was tried. */
  attempts: 'trawl-attempts',
  /** Dead letters only: undecodable | non-retriable | exhausted | poison. */
  deadLetterReason: 'trawl-dead-letter-reason',
  /** Dead letters only: epoch ms when it was given up. */
  failedAt: 'trawl-failed-at',
} as const;

/** Error messages are cut here so a huge stack or body cannot blow the message size. */
export const MAX_ERROR_MESSAGE_CHARS = 2000;

// A header as a string (kafkajs delivers Buffers; repeated headers keep the last value): it lives
// in @trawl/base, whose trace context reads headers with it, and is handed on with the readers here.
export { headerString };

/** Every header as a string, for handlers. */
export function headerStrings(headers: IHeaders | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of Object.keys(headers ?? {})) {
    const value = headerString(headers, name);
    if (value !== undefined) out[name] = value;
  }
  return out;
}

function positiveInt(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  return Number.isSafeInteger(n) && n >= 0 ? n : undefined;
}

/** The delivery attempt a message stands for: 1 unless a retry tier says otherwise. */
export function attemptOf(headers: IHeaders | undefined): number {
  const n = positiveInt(headerString(headers, TRAWL_HEADERS.attempt));
  return n !== undefined && n >= 1 ? n : 1;
}

/** Deliveries without an outcome the message carries from earlier tiers (0 when none). */
export function unfinishedOf(headers: IHeaders | undefined): number {
  return positiveInt(headerString(headers, TRAWL_HEADERS.unfinishedDeliveries)) ?? 0;
}

/** When the message may run (epoch ms); undefined when it may run now. */
export function dueAtOf(headers: IHeaders | undefined): number | undefined {
  return positiveInt(headerString(headers, TRAWL_HEADERS.dueAt));
}

export interface MessageOrigin {
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
}

/** Where the message was first read: its origin headers, or where it is now when it has none. */
export function originOf(headers: IHeaders | undefined, here: MessageOrigin): MessageOrigin {
  const topic = headerString(headers, TRAWL_HEADERS.originalTopic);
  const partition = positiveInt(headerString(headers, TRAWL_HEADERS.originalPartition));
  const offset = headerString(headers, TRAWL_HEADERS.originalOffset);
  if (topic === undefined || partition === undefined || offset === undefined || !/^\d+$/.test(offset)) return here;
  return { topic, partition, offset };
}

export interface ErrorDescription {
  readonly errorClass: string;
  readonly code: string | undefined;
  readonly message: string;
}

export function describeError(err: unknown): ErrorDescription {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return {
      errorClass: err.name || err.constructor.name || 'Error',
      code: typeof code === 'string' ? code : undefined,
      message: truncate(err.message, MAX_ERROR_MESSAGE_CHARS),
    };
  }
  return { errorClass: typeof err, code: undefined, message: truncate(String(err), MAX_ERROR_MESSAGE_CHARS) };
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** The message's headers, plus origin headers when it has none yet (first hop). */
function withOrigin(headers: IHeaders | undefined, here: MessageOrigin): IHeaders {
  const origin = originOf(headers, here);
  return {
    ...headers,
    [TRAWL_HEADERS.originalTopic]: origin.topic,
    [TRAWL_HEADERS.originalPartition]: String(origin.partition),
    [TRAWL_HEADERS.originalOffset]: origin.offset,
  };
}

function errorHeaders(err: ErrorDescription): IHeaders {
  return {
    [TRAWL_HEADERS.errorClass]: err.errorClass,
    [TRAWL_HEADERS.errorMessage]: err.message,
    ...(err.code !== undefined ? { [TRAWL_HEADERS.errorCode]: err.code } : {}),
  };
}

/** Headers of a message forwarded to a retry tier. */
export function retryHeaders(
  headers: IHeaders | undefined,
  here: MessageOrigin,
  next: { readonly attempt: number; readonly dueAt: number; readonly unfinished?: number },
  err: ErrorDescription,
): IHeaders {
  const base = { ...withOrigin(headers, here) };
  delete base[TRAWL_HEADERS.errorCode];
  delete base[TRAWL_HEADERS.unfinishedDeliveries];
  return {
    ...base,
    ...errorHeaders(err),
    [TRAWL_HEADERS.attempt]: String(next.attempt),
    [TRAWL_HEADERS.dueAt]: String(next.dueAt),
    ...(next.unfinished ? { [TRAWL_HEADERS.unfinishedDeliveries]: String(next.unfinished) } : {}),
  };
}

/**
 * Headers of a message parked until its due time (a deferral): the attempt and the deliveries without
 * an outcome are carried as they are, and the last failure's headers stay (a deferral is none).
 */
export function deferHeaders(
  headers: IHeaders | undefined,
  here: MessageOrigin,
  next: { readonly attempt: number; readonly dueAt: number; readonly unfinished: number },
): IHeaders {
  const base = { ...withOrigin(headers, here) };
  delete base[TRAWL_HEADERS.unfinishedDeliveries];
  return {
    ...base,
    [TRAWL_HEADERS.attempt]: String(next.attempt),
    [TRAWL_HEADERS.dueAt]: String(next.dueAt),
    [TRAWL_HEADERS.deferrals]: String((positiveInt(headerString(headers, TRAWL_HEADERS.deferrals)) ?? 0) + 1),
    ...(next.unfinished ? { [TRAWL_HEADERS.unfinishedDeliveries]: String(next.unfinished) } : {}),
  };
}

/**
 * Why a message was given up: it cannot be decoded; its handler said it never will work; it failed
 * through every retry tier; or it was delivered TRAWL_MAX_DELIVERIES times without an outcome.
 */
export type DeadLetterReason = 'undecodable' | 'non-retriable' | 'exhausted' | 'poison';

/** Headers of a dead letter. The due-at header is dropped: nothing is due any more. */
export function deadLetterHeaders(
  headers: IHeaders | undefined,
  here: MessageOrigin,
  info: { readonly attempts: number; readonly reason: DeadLetterReason; readonly failedAt: number },
  err: ErrorDescription,
): IHeaders {
  const base = { ...withOrigin(headers, here) };
  delete base[TRAWL_HEADERS.dueAt];
  delete base[TRAWL_HEADERS.errorCode];
  return {
    ...base,
    ...errorHeaders(err),
    [TRAWL_HEADERS.attempts]: String(info.attempts),
    [TRAWL_HEADERS.deadLetterReason]: info.reason,
    [TRAWL_HEADERS.failedAt]: String(info.failedAt),
  };
}
