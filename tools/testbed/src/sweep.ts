import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { dirFromSshdCmdline, PID_FILE_NAME, paths, readState, SSHD_CONFIG_NAME } from './layout';
import {
  descendantsOf,
  listProcs,
  type ProcInfo,
  selfAndAncestors,
  socketOwners,
  type Target,
} from './procs';

/** The sshd config of every host directory (h1, h2, …) in `dir`. */
function hostConfigs(dir: string): string[] {
  try {
    return readdirSync(dir)
      .filter((e) => /^h\d+$/.test(e))
      .map((e) => join(dir, e, SSHD_CONFIG_NAME))
      .filter((f) => existsSync(f));
  } catch {
    return [];
  }
}

function readPidFile(file: string): number | undefined {
  try {
    const n = Number(readFileSync(file, 'utf8').trim());
    return Number.isInteger(n) && n > 0 ? n : undefined;
  } catch {
    return undefined;
  }
}

/** "127.0.0.2:22" for every host of the testbed in `dir`, from testbed.json or the sshd configs. */
export function endpointsOf(dir: string): string[] {
  const state = readState(dir);
  const out = new Set<string>();
  if (state) for (const h of state.hosts) out.add(`${h.address}:${state.port}`);
  for (const conf of hostConfigs(dir)) {
    const m = /^ListenAddress\s+(127\.\d+\.\d+\.\d+:\d+)\s*$/m.exec(readFileSync(conf, 'utf8'));
    if (m) out.add(m[1]!);
  }
  return [...out];
}

/**
 * Every process that belongs to the testbed in `dir`: its sshd listeners (found by the config
 * path in their command line), sshd session processes holding a connection to one of its
 * addresses (also those whose listener already died), and everything running under them.
 * Never the calling process or its ancestors; never another testbed's processes.
 */
export function testbedProcesses(dir: string, endpoints: string[] = endpointsOf(dir)): Target[] {
  const table = listProcs();
  const byPid = new Map(table.map((p) => [p.pid, p]));
  const roots = new Set<number>();
  const foreignListeners = new Set<number>();
  // The listeners: by the pid in each host's PidFile, checked against its command line (a
  // PidFile outlives its process, and pids are reused), and by the config path in the process
  // table, which also finds an sshd whose PidFile is gone.
  for (const conf of hostConfigs(dir)) {
    const pid = readPidFile(join(dirname(conf), PID_FILE_NAME));
    const p = pid === undefined ? undefined : byPid.get(pid);
    if (p?.cmdline.includes(`-f ${conf}`)) roots.add(p.pid);
  }
  for (const p of table) {
    const d = dirFromSshdCmdline(p.cmdline);
    if (d === undefined) continue;
    if (d === dir) roots.add(p.pid);
    else foreignListeners.add(p.pid);
  }
  const underForeign = (pid: number): boolean => {
    for (let p: ProcInfo | undefined = byPid.get(pid), n = 0; p && n < 64; n++) {
      if (foreignListeners.has(p.pid)) return true;
      p = byPid.get(p.ppid);
    }
    return false;
  };
  for (const pid of socketOwners(new Set(endpoints))) {
    if (!underForeign(pid)) roots.add(pid);
  }
  const all = new Set([...roots, ...descendantsOf(roots, table)]);
  for (const pid of selfAndAncestors()) all.delete(pid);
  const out: Target[] = [];
  for (const pid of all) {
    const p = byPid.get(pid);
    if (p && p.state !== 'Z') out.push({ pid, startTime: p.startTime });
  }
  return out;
}

/** True when `dir` looks like a testbed directory we may delete. */
export function isTestbedDir(dir: string): boolean {
  if (existsSync(paths(dir).state)) return true;
  try {
    return readdirSync(dir).some(
      (e) => /^h\d+$/.test(e) && existsSync(join(dir, e, SSHD_CONFIG_NAME)),
    );
  } catch {
    return false;
  }
}

/** Removes a testbed directory, refusing anything that does not look like one. */
export function removeTestbedDir(dir: string): void {
  if (!existsSync(dir)) return;
  if (!isTestbedDir(dir)) return;
  rmSync(dir, { recursive: true, force: true });
}
