/**
 * The console's errors. Codes and bodies follow the API's catalogue (`{ error: { code, message,
 * field? } }`), so a client of the dashboard endpoints handles them exactly like the rest of the
 * API; the codes the API does not have are documented in the console README and tested there.
 */
import { TrawlError } from '@trawl/schemas';

export const CONSOLE_ERRORS = {
  VALIDATION_FAILED: { status: 400, description: 'A parameter is out of bounds or malformed; `field` names it.' },
  JOB_NOT_FOUND: { status: 404, description: 'No job with this id belongs to the caller.' },
  DEAD_LETTER_NOT_FOUND: { status: 404, description: "No dead letter with this id belongs to the caller (unknown, another user's, or undecodable)." },
  ALREADY_REDRIVEN: { status: 409, description: 'This dead letter was re-driven already; if it failed again it is a new dead letter.' },
  NOT_REDRIVABLE: { status: 409, description: 'The dead letter names an origin topic that is not one of Trawl\'s, so it is not republished.' },
  DEPENDENCY_UNAVAILABLE: { status: 503, description: 'ClickHouse, Kafka or Postgres did not answer; retry later.' },
} as const;

export type ConsoleErrorCode = keyof typeof CONSOLE_ERRORS;

/** An error meant for the client; `retriable` says whether the same request may succeed later. */
export class ConsoleError extends TrawlError {
  readonly statusCode: number;
  readonly retriable: boolean;

  constructor(
    readonly code: ConsoleErrorCode,
    message: string = CONSOLE_ERRORS[code].description,
    readonly field?: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.statusCode = CONSOLE_ERRORS[code].status;
    this.retriable = this.statusCode >= 500;
  }

  toBody() {
    return { error: { code: this.code, message: this.message, ...(this.field ? { field: this.field } : {}) } };
  }
}

/** Thrown when a dependency is down: the request may succeed later. */
export function unavailable(what: string, cause: unknown): ConsoleError {
  const detail = cause instanceof Error ? cause.message : String(cause);
  return new ConsoleError('DEPENDENCY_UNAVAILABLE', `${what} did not answer (${detail.slice(0, 200)}); retry later`, undefined, { cause });
}
