import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { isProcessAlive } from '../session/proc-identity';

/**
 * Kills (SIGKILL, whole process group) every process recorded in a session's `procs`
 * directory that is still the process recorded (pid and start time match). For a lamd that
 * died without cleaning up: `wipe`, and a new lamd taking over a stale session directory.
 */
export function killRecordedProcesses(procsDir: string): number {
  let names: string[];
  try {
    names = readdirSync(procsDir);
  } catch {
    return 0;
  }
  let killed = 0;
  for (const name of names) {
    const file = join(procsDir, name);
    let pid = Number.NaN;
    let startTime: string | undefined;
    try {
      [pid, startTime] = parseRecord(readFileSync(file, 'utf8'));
    } catch {
      continue;
    }
    if (isProcessAlive(pid, startTime)) {
      for (const target of [-pid, pid]) {
        try {
          process.kill(target, 'SIGKILL');
        } catch {
          // gone meanwhile
        }
      }
      killed++;
    }
    rmSync(file, { force: true });
  }
  return killed;
}

function parseRecord(text: string): [number, string | undefined] {
  const [pid, start] = text.trim().split(/\s+/);
  return [Number(pid), start || undefined];
}
