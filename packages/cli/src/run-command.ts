import { isSsiError } from '@ssi/core';
import { cliVersion } from './cli-version';

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

/** What `<command> --version` prints: one line in the form other MPIs use, `mpirun (Open MPI) 4.1.4`. */
export function versionLine(command: string): string {
  return `${command} (SSI for Node) ${cliVersion()}\n`;
}

/**
 * Runs a command's `main` and turns its outcome into an exit code. Errors the user can act on
 * (SsiError, UsageError) print as a message; anything else is a bug and keeps its stack. A
 * bare `--version` is answered here, the same for every command; help (a UsageError with exit
 * code 0) goes to stdout, since it is what the user asked for, not an error.
 */
export function runCommand(main: (argv: string[]) => Promise<number>): void {
  const name = commandName();
  const argv = process.argv.slice(2);
  if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
    process.stdout.write(versionLine(name));
    return;
  }
  main(argv).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      if (err instanceof UsageError && err.exitCode === 0) {
        process.stdout.write(`${err.message}\n`);
        process.exitCode = 0;
      } else if (isSsiError(err) || err instanceof UsageError) {
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
