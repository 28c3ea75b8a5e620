import { TrawlError } from '@trawl/schemas';

/**
 * Errors of the Postgres projector. Each has a stable `code`, says whether trying again can help
 * (`retriable`), and keeps its `cause`. The live loop retries retriable ones with backoff and
 * stops the process on the others, so a supervisor (or an operator) has to act.
 */
export abstract class ProjectorPgError extends TrawlError {}

/**
 * Thrown at start-up when the read-model tables were built by another projection version: a
 * newer one replaced them (this process is outdated), or an older one is live and this process
 * must wait for `trawl replay pg` to build its version.
 */
export class ProjectionVersionMismatchError extends ProjectorPgError {
  readonly code = 'PG_PROJECTION_VERSION_MISMATCH';
  readonly retriable = false;
}

/**
 * Thrown inside a live batch when a replay swapped in tables of a newer version: the batch rolls
 * back (nothing is lost, the new version resumes from the swapped offsets) and this process ends.
 */
export class ProjectionSupersededError extends ProjectorPgError {
  readonly code = 'PG_PROJECTION_SUPERSEDED';
  readonly retriable = false;
}

/** Thrown by a replay whose shadow tables do not match the live ones at the same offsets. */
export class ReplayVerificationError extends ProjectorPgError {
  readonly code = 'PG_REPLAY_VERIFICATION';
  readonly retriable = false;
  constructor(
    message: string,
    readonly details: unknown,
  ) {
    super(message);
  }
}

/** Where an event sits in the log, and what it is: how a replay failure points at its cause. */
export interface EventPlace {
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
  readonly event: string;
  readonly event_id: string;
  readonly occurred_at: string;
}

/**
 * Thrown by a replay when a row it built breaks a key, a check or a column type of its table: the
 * message names the live table and constraint (not the shadow's index name), the key or column, and
 * the events behind the row with their log positions. The shadow tables are dropped and the live
 * ones were never touched; trying again gives the same result until the cause is fixed.
 */
export class ReplayConstraintError extends ProjectorPgError {
  readonly code = 'PG_REPLAY_CONSTRAINT';
  readonly retriable = false;
  constructor(
    message: string,
    readonly details: { readonly table: string; readonly constraint: string | null; readonly key: Readonly<Record<string, string>>; readonly events: readonly EventPlace[] },
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Thrown for replay options that cannot be honoured (an unparsable --from, for instance). */
export class ReplayOptionsError extends ProjectorPgError {
  readonly code = 'PG_REPLAY_OPTIONS';
  readonly retriable = false;
}

/** Another replay of the projection holds the replay lock; try again when it has finished. */
export class ReplayInProgressError extends ProjectorPgError {
  readonly code = 'PG_REPLAY_IN_PROGRESS';
  readonly retriable = true;
}

/** Postgres could not be reached or refused for a passing reason (connection, failover, deadlock). */
export class DatabaseUnavailableError extends ProjectorPgError {
  readonly code = 'PG_DATABASE_UNAVAILABLE';
  readonly retriable = true;
}

/** The catalogue, for documentation tests and for callers that map codes. */
export const PROJECTOR_PG_ERROR_CODES = [
  'PG_PROJECTION_VERSION_MISMATCH',
  'PG_PROJECTION_SUPERSEDED',
  'PG_REPLAY_VERIFICATION',
  'PG_REPLAY_CONSTRAINT',
  'PG_REPLAY_OPTIONS',
  'PG_REPLAY_IN_PROGRESS',
  'PG_DATABASE_UNAVAILABLE',
] as const;

const TRANSIENT_PG_CODES = new Set([
  '08000', '08001', '08003', '08004', '08006', '08007', // connection exceptions
  '40001', '40P01', // serialization failure, deadlock
  '53300', // too many connections
  '57P01', '57P02', '57P03', // admin shutdown, crash shutdown, cannot connect now
]);

const TRANSIENT_NODE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN']);

/** Whether a thrown value from pg means "the database is (briefly) not there": retry, don't die. */
export function isTransientDatabaseError(err: unknown): boolean {
  if (err instanceof ProjectorPgError) return err.retriable;
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && (TRANSIENT_PG_CODES.has(code) || TRANSIENT_NODE_CODES.has(code))) return true;
  const message = err instanceof Error ? err.message : String(err);
  return /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error/i.test(message);
}
