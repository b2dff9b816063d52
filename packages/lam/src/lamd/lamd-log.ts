import { appendFileSync } from 'node:fs';

/**
 * The lamd's log: a file in its session directory (the lamd has no terminal). Best effort: a
 * log line that cannot be written must never take the daemon down.
 */
export class LamdLog {
  constructor(
    private readonly file: string,
    readonly debugEnabled: boolean,
  ) {}

  info(message: string): void {
    this.write('info', message);
  }

  warn(message: string): void {
    this.write('warn', message);
  }

  debug(message: string): void {
    if (this.debugEnabled) this.write('debug', message);
  }

  private write(level: string, message: string): void {
    try {
      appendFileSync(
        this.file,
        `${new Date().toISOString()} [${process.pid}] ${level}: ${message}\n`,
        {
          mode: 0o600,
        },
      );
    } catch {
      // the session directory may already be gone during shutdown
    }
  }
}
