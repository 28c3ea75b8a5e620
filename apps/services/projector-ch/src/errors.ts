import { TrawlError } from '@trawl/schemas';

/**
 * Errors of the ClickHouse projector, each with a stable `code`, whether trying again can help
 * (`retriable`), and its `cause`. The flusher retries retriable ones with backoff (the database
 * is away: pause, then catch up) and stops on the others.
 */
export abstract class ProjectorChError extends TrawlError {}

/** ClickHouse did not answer (refused, reset, timed out) or answered that it is overloaded. */
export class ClickHouseUnavailableError extends ProjectorChError {
  readonly code = 'CH_UNAVAILABLE';
  readonly retriable = true;
}

/** ClickHouse refused a statement; `chCode` is its error number (e.g. 60: unknown table). */
export class ClickHouseQueryError extends ProjectorChError {
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

/** The analytics tables were built by another projection version (see PG's counterpart). */
export class ProjectionVersionMismatchError extends ProjectorChError {
  readonly code = 'CH_PROJECTION_VERSION_MISMATCH';
  readonly retriable = false;
}

/** A replay swapped in tables of a newer version: this projector must stop writing. */
export class ProjectionSupersededError extends ProjectorChError {
  readonly code = 'CH_PROJECTION_SUPERSEDED';
  readonly retriable = false;
}

/** The replayed tables differ from the live ones at the same positions. */
export class ReplayVerificationError extends ProjectorChError {
  readonly code = 'CH_REPLAY_VERIFICATION';
  readonly retriable = false;
  constructor(
    message: string,
    readonly details: unknown,
  ) {
    super(message);
  }
}

export class ReplayOptionsError extends ProjectorChError {
  readonly code = 'CH_REPLAY_OPTIONS';
  readonly retriable = false;
}

export class ReplayInProgressError extends ProjectorChError {
  readonly code = 'CH_REPLAY_IN_PROGRESS';
  readonly retriable = true;
}

export const PROJECTOR_CH_ERROR_CODES = [
  'CH_UNAVAILABLE',
  'CH_QUERY',
  'CH_PROJECTION_VERSION_MISMATCH',
  'CH_PROJECTION_SUPERSEDED',
  'CH_REPLAY_VERIFICATION',
  'CH_REPLAY_OPTIONS',
  'CH_REPLAY_IN_PROGRESS',
] as const;

export { isRetriableChCode } from '@trawl/clickhouse';
