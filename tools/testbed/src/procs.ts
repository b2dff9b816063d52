import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { endianness } from 'node:os';

/** One row of the Linux process table, read from /proc. */
export interface ProcInfo {
  pid: number;
  ppid: number;
  /** single-letter state from /proc/PID/stat; 'Z' is a zombie (dead, not yet reaped) */
  state: string;
  /** start time in clock ticks since boot: with the pid, identifies one process for good */
  startTime: string;
  /** command line, NULs turned into spaces (sshd rewrites its own title) */
  cmdline: string;
}

export function readProc(pid: number): ProcInfo | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // "pid (comm) state ppid …": comm may hold spaces and parentheses, so split after the last ')'.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    let cmdline = '';
    try {
      cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8')
        .replace(/\0+$/, '')
        .replace(/\0/g, ' ');
    } catch {
      // a kernel thread or a process that just exited
    }
    return {
      pid,
      state: rest[0] ?? '?',
      ppid: Number(rest[1]),
      startTime: rest[19] ?? '',
      cmdline,
    };
  } catch {
    return undefined;
  }
}

export function listProcs(): ProcInfo[] {
  const out: ProcInfo[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const info = readProc(Number(name));
    if (info) out.push(info);
  }
  return out;
}

/** True when the process exists and is not a zombie. */
export function isAlive(pid: number, startTime?: string): boolean {
  const info = readProc(pid);
  if (!info || info.state === 'Z' || info.state === 'X') return false;
  return startTime === undefined || info.startTime === startTime;
}

/** The calling process and its ancestors: never to be killed by cleanup code. */
export function selfAndAncestors(): Set<number> {
  const out = new Set<number>();
  let pid = process.pid;
  while (pid > 1 && !out.has(pid)) {
    out.add(pid);
    const info = readProc(pid);
    if (!info) break;
    pid = info.ppid;
  }
  return out;
}

/** All descendants of `roots` (not including the roots). */
export function descendantsOf(roots: Iterable<number>, table: ProcInfo[]): Set<number> {
  const children = new Map<number, number[]>();
  for (const p of table) {
    const list = children.get(p.ppid);
    if (list) list.push(p.pid);
    else children.set(p.ppid, [p.pid]);
  }
  const out = new Set<number>();
  const stack = [...roots];
  while (stack.length > 0) {
    const pid = stack.pop()!;
    for (const child of children.get(pid) ?? []) {
      if (!out.has(child)) {
        out.add(child);
        stack.push(child);
      }
    }
  }
  return out;
}

function decodeIpv4(hex: string): string {
  const bytes = hex.match(/../g)!.map((b) => Number.parseInt(b, 16));
  if (endianness() === 'LE') bytes.reverse();
  return bytes.join('.');
}

/**
 * Pids holding an IPv4 TCP socket (listening or connected) whose local end is one of
 * `endpoints` ("127.0.0.2:22"). Finds sshd session processes whose listener is already gone.
 */
export function socketOwners(endpoints: Set<string>): Set<number> {
  const inodes = new Set<string>();
  let table = '';
  try {
    table = readFileSync('/proc/net/tcp', 'utf8');
  } catch {
    return new Set();
  }
  for (const line of table.split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    const local = f[1];
    const inode = f[9];
    if (!local || !inode || inode === '0') continue;
    const [addrHex, portHex] = local.split(':');
    if (!addrHex || !portHex) continue;
    if (endpoints.has(`${decodeIpv4(addrHex)}:${Number.parseInt(portHex, 16)}`)) inodes.add(inode);
  }
  const owners = new Set<number>();
  if (inodes.size === 0) return owners;
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${name}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${name}/fd/${fd}`));
        if (m && inodes.has(m[1]!)) {
          owners.add(Number(name));
          break;
        }
      } catch {
        // fd closed meanwhile
      }
    }
  }
  return owners;
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // already gone (ESRCH)
  }
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

export interface Target {
  pid: number;
  startTime: string;
}

function stillAlive(targets: Target[]): Target[] {
  return targets.filter((t) => isAlive(t.pid, t.startTime));
}

/**
 * SIGTERM every target, wait up to `graceMs` for them to go, SIGKILL the rest and wait again.
 * Returns the targets still alive at the end (normally none).
 */
export async function terminate(targets: Target[], graceMs = 3000): Promise<Target[]> {
  for (const t of targets) signal(t.pid, 'SIGTERM');
  let left = stillAlive(targets);
  for (const deadline = Date.now() + graceMs; left.length > 0 && Date.now() < deadline; ) {
    await sleep(25);
    left = stillAlive(left);
  }
  for (const t of left) signal(t.pid, 'SIGKILL');
  for (const deadline = Date.now() + 3000; left.length > 0 && Date.now() < deadline; ) {
    await sleep(25);
    left = stillAlive(left);
  }
  return left;
}

/** `terminate` for process-exit handlers, where nothing asynchronous runs any more. */
export function terminateSync(targets: Target[], graceMs = 1000): Target[] {
  for (const t of targets) signal(t.pid, 'SIGTERM');
  let left = stillAlive(targets);
  for (const deadline = Date.now() + graceMs; left.length > 0 && Date.now() < deadline; ) {
    sleepSync(20);
    left = stillAlive(left);
  }
  for (const t of left) signal(t.pid, 'SIGKILL');
  for (const deadline = Date.now() + 1000; left.length > 0 && Date.now() < deadline; ) {
    sleepSync(20);
    left = stillAlive(left);
  }
  return left;
}
