import { TrawlError } from '@trawl/schemas';

/**
 * What the client throws: ClickHouse did not answer, or refused. Every package that talks to
 * ClickHouse (projector-ch, the API's analytics) meets these two classes; a package's own
 * catalogue names their codes beside its own.
 */
export abstract class ClickHouseError extends TrawlError {}

/** ClickHouse did not answer (down, unreachable, reset, timed out) or answered 5xx without an error number. */
export class ClickHouseUnavailableError extends ClickHouseError {
  readonly code = 'CH_UNAVAILABLE';
  readonly retriable = true;
}

/** ClickHouse refused a statement; `chCode` is its error number (e.g. 60: unknown table, 159: timeout). */
export class ClickHouseQueryError extends ClickHouseError {
  readonly code = 'CH_QUERY';
  constructor(
    message: string,
    readonly chCode: number | undefined,
    readonly retriable: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** ClickHouse error numbers worth retrying: overload, memory, too many parts, timeouts, shutdown. */
const RETRIABLE_CH_CODES = new Set([159, 160, 164, 202, 203, 209, 210, 241, 252, 319, 394]);

export function isRetriableChCode(code: number | undefined): boolean {
  return code !== undefined && RETRIABLE_CH_CODES.has(code);
}
