import { TrawlError } from '@trawl/schemas';

/**
 * What the client throws when its caller names no errors of its own: ClickHouse did not answer,
 * or refused. A package with its own error catalogue (projector-ch) passes `errors` to the client
 * so that these failures arrive as its own classes, with its codes and retry rules.
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

/** How a client turns a failure into an error. */
export interface ClickHouseErrors {
  unavailable(message: string, cause?: unknown): Error;
  refused(message: string, chCode: number | undefined, retriable: boolean): Error;
}

export const DEFAULT_CLICKHOUSE_ERRORS: ClickHouseErrors = {
  unavailable: (message, cause) => new ClickHouseUnavailableError(message, cause === undefined ? undefined : { cause }),
  refused: (message, chCode, retriable) => new ClickHouseQueryError(message, chCode, retriable),
};

/** ClickHouse error numbers worth retrying: overload, memory, too many parts, timeouts, shutdown. */
const RETRIABLE_CH_CODES = new Set([159, 160, 164, 202, 203, 209, 210, 241, 252, 319, 394]);

export function isRetriableChCode(code: number | undefined): boolean {
  return code !== undefined && RETRIABLE_CH_CODES.has(code);
}
