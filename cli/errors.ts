// Every way monitorctl fails, as the kind of failure and its exit status (docs/cli.md#exit-codes).
// Each is reported as one line on stderr; nothing prints a stack.

/** usage: the command line or the local configuration; not_found: 404; auth: 401/403; failure: the rest. */
export type FailureKind = 'usage' | 'not_found' | 'auth' | 'failure';

export const EXIT_CODES: Record<FailureKind, number> = {
  usage: 2,
  not_found: 3,
  auth: 4,
  failure: 5,
};

/** A failure that ends the command with the exit status of its kind and one line of text. */
export class CliError extends Error {
  constructor(
    readonly kind: FailureKind,
    message: string,
  ) {
    super(message);
    this.name = 'CliError';
  }

  get exitCode(): number {
    return EXIT_CODES[this.kind];
  }
}

export const usageError = (message: string) => new CliError('usage', message);
