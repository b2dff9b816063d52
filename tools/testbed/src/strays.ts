import { readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { dirFromSshdCmdline, readState, TMP_PREFIX } from './layout';
import { isAlive, listProcs, type Target, terminate } from './procs';
import { isTestbedDir, removeTestbedDir, testbedProcesses } from './sweep';

export interface KillStrayOptions {
  /** also stop testbeds whose owner is alive and those left running by `ssi-testbed up` */
  all?: boolean;
  /** only this testbed directory (stopped whoever owns it) */
  dir?: string;
  /** where testbed directories are looked for besides the process table (default os.tmpdir()) */
  tmpdir?: string;
}

export interface KillStrayReport {
  /** testbed directories stopped and removed */
  dirs: string[];
  /** pids sent SIGTERM (then SIGKILL if needed) */
  killed: number[];
  /** pids that survived even SIGKILL (normally empty) */
  survivors: number[];
}

const ORPHAN_DIR_AGE_MS = 60_000;

function candidates(base: string): Set<string> {
  const out = new Set<string>();
  for (const p of listProcs()) {
    const d = dirFromSshdCmdline(p.cmdline);
    if (d) out.add(d);
  }
  let entries: string[] = [];
  try {
    entries = readdirSync(base);
  } catch {
    // no tmpdir: only the process table counts
  }
  for (const e of entries) {
    if (e.startsWith(TMP_PREFIX)) {
      const d = join(base, e);
      if (isTestbedDir(d)) out.add(d);
    }
  }
  return out;
}

function isStray(dir: string, all: boolean): boolean {
  if (all) return true;
  const state = readState(dir);
  if (!state) {
    // sshds whose directory lost its testbed.json, or a directory left half-made long ago
    try {
      return Date.now() - statSync(dir).mtimeMs > ORPHAN_DIR_AGE_MS;
    } catch {
      return true; // directory gone, sshd still running
    }
  }
  if (state.owner === null) return false; // `ssi-testbed up`: running on purpose
  return !isAlive(state.owner.pid, state.owner.startTime);
}

/**
 * Finds testbeds left behind — by their sshd command lines (`-f …/hN/ssi-testbed-sshd.conf`) and
 * by `ssi-testbed-*` directories in os.tmpdir() — and stops them: kills their sshds and what
 * runs under them, removes their directories. By default only testbeds whose owning process is
 * gone (a crashed or SIGKILLed test run); `all` takes every testbed, also live ones of others.
 */
export async function killStrayTestbeds(opts: KillStrayOptions = {}): Promise<KillStrayReport> {
  const dirs = opts.dir
    ? [resolve(opts.dir)]
    : [...candidates(opts.tmpdir ?? tmpdir())].filter((d) => isStray(d, !!opts.all));
  const report: KillStrayReport = { dirs: [], killed: [], survivors: [] };
  for (const dir of dirs) {
    const targets: Target[] = testbedProcesses(dir);
    const left = await terminate(targets);
    report.killed.push(...targets.map((t) => t.pid));
    report.survivors.push(...left.map((t) => t.pid));
    if (left.length === 0) removeTestbedDir(dir);
    report.dirs.push(dir);
  }
  return report;
}
