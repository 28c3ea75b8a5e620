import { TrawlError } from '@trawl/streams';

/**
 * Errors the CLI reports as one line (no stack) with an exit code: wrong usage (2), or a failure
 * the user can act on (1). Anything else is a bug and is printed with its stack.
 */
export class CliError extends TrawlError {
  readonly code: string = 'TRAWL_CLI_FAILED';
  readonly retriable: boolean = false;
  constructor(
    message: string,
    readonly exitCode: number = 1,
  ) {
    super(message);
  }
}

/** The command line cannot be understood: the user is shown the usage, exit code 2. */
export class UsageError extends CliError {
  override readonly code = 'TRAWL_CLI_USAGE';
  constructor(message: string) {
    super(message, 2);
  }
}
