/**
 * Errors the CLI reports as one line (no stack) with an exit code: wrong usage (2), or a failure
 * the user can act on (1). Anything else is a bug and is printed with its stack.
 */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = 1,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

export class UsageError extends CliError {
  constructor(message: string) {
    super(message, 2);
  }
}
