import { TrawlError } from '@trawl/schemas';

/**
 * Errors of the ClickHouse projector, each with a stable `code`, whether trying again can help
 * (`retriable`), and its `cause`. The flusher retries retriable ones with backoff (the database
 * is away: pause, then catch up) and stops on the others. The client's two (CH_UNAVAILABLE,
 * CH_QUERY) are the ClickHouse library's classes, part of this catalogue as they are.
 */
export abstract class ProjectorChError extends TrawlError {}

export { ClickHouseQueryError, ClickHouseUnavailableError, isRetriableChCode } from '@trawl/clickhouse';

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

