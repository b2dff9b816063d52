import { readdirSync, readFileSync } from 'node:fs';

/** The name of the environment variable that marks every process of one cluster. */
export const MARKER = 'SSI_SLURM_CLUSTER';

/** A process that exists and is not a zombie (zombies count as gone: PID 1 may not reap here). */
export function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

function pids(): number[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map(Number);
}

function environ(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0');
  } catch {
    return [];
  }
}

export function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0').join(' ').trim();
  } catch {
    return '';
  }
}

/**
 * Live processes whose environment carries `SSI_SLURM_CLUSTER=<dir>`: the cluster's daemons, the
 * slurmstepds they fork and everything a job of the cluster started (sbatch exports the
 * submitter's environment, which the fixture marks).
 */
export function markedProcesses(dir?: string): { pid: number; dir: string; cmd: string }[] {
  const out: { pid: number; dir: string; cmd: string }[] = [];
  for (const pid of pids()) {
    if (pid === process.pid) continue;
    const mark = environ(pid).find((e) => e.startsWith(`${MARKER}=`));
    if (!mark) continue;
    const d = mark.slice(MARKER.length + 1);
    if (dir !== undefined && d !== dir) continue;
    if (!alive(pid)) continue;
    out.push({ pid, dir: d, cmd: cmdline(pid) });
  }
  return out;
}

/** The pids of `markedProcesses(dir)`. */
export function markedPids(dir: string): number[] {
  return markedProcesses(dir).map((p) => p.pid);
}

export function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // already gone
  }
}

/** Wait until none of `pidList` is alive; false on timeout. */
export async function waitGone(pidList: number[], timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (pidList.some(alive)) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
  return true;
}

/** Synchronous variant for exit hooks: spins for at most `timeoutMs`. */
export function waitGoneSync(pidList: number[], timeoutMs: number): boolean {
  const deadline = Date.now() + timeoutMs;
  const sab = new Int32Array(new SharedArrayBuffer(4));
  while (pidList.some(alive)) {
    if (Date.now() > deadline) return false;
    Atomics.wait(sab, 0, 0, 20);
  }
  return true;
}

/**
 * SIGKILLs what `list` names, pass after pass, until it names nothing or `timeoutMs` passed; true
 * when nothing is left. One pass is not enough: a task a slurmstepd was forking while the list
 * was read escapes the pass that kills its parent, and then belongs to nobody.
 */
export async function killUntilGone(list: () => number[], timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (let left = list(); left.length > 0; left = list()) {
    if (Date.now() > deadline) return false;
    for (const pid of left) signal(pid, 'SIGKILL');
    await waitGone(left, 1000);
  }
  return true;
}

/** Synchronous variant of `killUntilGone`, for exit hooks. */
export function killUntilGoneSync(list: () => number[], timeoutMs: number): boolean {
  const deadline = Date.now() + timeoutMs;
  for (let left = list(); left.length > 0; left = list()) {
    if (Date.now() > deadline) return false;
    for (const pid of left) signal(pid, 'SIGKILL');
    waitGoneSync(left, 1000);
  }
  return true;
}
