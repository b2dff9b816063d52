import { isSsiError } from '@ssi/core';

/** An error meant for the user: printed as one line, no stack trace. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
  constructor(
    message: string,
    readonly exitCode = 2,
  ) {
    super(message);
  }
}

/**
 * Runs a command's `main` and turns its outcome into an exit code. Errors the user can act on
 * (SsiError, UsageError) print as a message; anything else is a bug and keeps its stack.
 */
export function runCommand(main: (argv: string[]) => Promise<number>): void {
  const name = commandName();
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      if (isSsiError(err) || err instanceof UsageError) {
        process.stderr.write(`${name}: ${err.message}\n`);
        process.exitCode = err instanceof UsageError ? err.exitCode : 1;
      } else {
        process.stderr.write(`${name}: internal error: ${(err as Error)?.stack ?? err}\n`);
        process.exitCode = 70;
      }
    },
  );
}

function commandName(): string {
  const script = process.argv[1] ?? 'ssi';
  return (
    script
      .split('/')
      .pop()
      ?.replace(/\.(c|m)?(j|t)s$/, '') ?? 'ssi'
  );
}
