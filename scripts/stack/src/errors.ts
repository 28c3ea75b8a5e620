/**
 * Errors of the local stack. Every one names the part it concerns, says why (often the tail of
 * the part's log) and what to do: the person reading it is at a terminal with a red line and
 * wants the next command, not a stack trace.
 */
import { TrawlError } from '@trawl/streams';
import type { PartName } from './part.ts';

/** `retriable`: whether running `stack up` again, unchanged, could succeed (a slow start, a busy port freed). */
export abstract class StackError extends TrawlError {
  constructor(
    readonly part: PartName,
    message: string,
    /** What to do about it, one or two sentences. */
    readonly hint: string,
    options?: { cause?: unknown; logTail?: string },
  ) {
    super(message, options);
    this.logTail = options?.logTail;
  }
  /** The last lines of the part's log, when it has one. */
  readonly logTail: string | undefined;
}

/** A program or file the part needs is not installed: `npm run setup` (or the named package) fixes it. */
export class MissingDependencyError extends StackError {
  readonly code = 'TRAWL_STACK_MISSING_DEPENDENCY';
  readonly retriable = false;
}

/** The part's port is taken by something that is not that part; choose another port or stop it. */
export class PortBusyError extends StackError {
  readonly code = 'TRAWL_STACK_PORT_BUSY';
  readonly retriable = false;
}

/** The part was started but exited, or never became healthy within its time limit. */
export class PartStartError extends StackError {
  readonly code = 'TRAWL_STACK_START_FAILED';
  readonly retriable = true;
}

/** An endpoint given by the user (an environment variable) does not answer as the stack needs. */
export class ExternalEndpointError extends StackError {
  readonly code = 'TRAWL_STACK_EXTERNAL_UNREACHABLE';
  readonly retriable = true;
}

/** A part could not run because one it depends on failed (the registry without Postgres, topics without Kafka). */
export class DependencyFailedError extends StackError {
  readonly code = 'TRAWL_STACK_DEPENDENCY_FAILED';
  readonly retriable = true;
}

/** State under TRAWL_HOME no longer matches the configuration (a port changed after Kafka formatted its log). */
export class StaleStateError extends StackError {
  readonly code = 'TRAWL_STACK_STALE_STATE';
  readonly retriable = false;
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
