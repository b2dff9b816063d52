import { readFileSync } from 'node:fs';

/**
 * Is `pid` a live process on this host? `kill(pid, 0)` (EPERM counts as alive: it exists, it is
 * just not ours), and on Linux a zombie (state Z or X in /proc/<pid>/stat) counts as dead: it
 * can no longer release a lock or read a postbox, it only waits for its parent to reap it.
 */
export function isProcessAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    // "pid (comm) S ..."; comm may contain spaces and parentheses: take the last ')'.
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return true; // no /proc: trust kill(pid, 0)
  }
}
