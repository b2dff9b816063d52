import { readFileSync } from 'node:fs';

/** Field 22 of /proc/PID/stat: with the pid it names one process for good (pids get reused). */
export function procStartTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (rest[0] === 'Z' || rest[0] === 'X') return undefined;
    return rest[19];
  } catch {
    return undefined;
  }
}

/** True when `pid` runs and, if known, is still the process that started at `startTime`. */
export function isProcessAlive(pid: number, startTime?: string): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  const now = procStartTime(pid);
  if (now !== undefined) return startTime === undefined || now === startTime;
  if (process.platform === 'linux') return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
