import { readdirSync, readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { formatCpuList, parseCpuList } from './cpu-list';

/**
 * What a launcher on this node may bind ranks to, as seen now: the CPUs this process may use,
 * grouped into cores, and the cores other processes are pinned to.
 */
export interface NodeCpus {
  /** CPUs this process may run on (its affinity: a cgroup cpuset, taskset, a batch system's). */
  allowed: number[];
  /** The allowed CPUs grouped by physical core (hardware threads of one core together). */
  cores: number[][];
  /** CPUs of cores that some other user-space process is pinned to (`heldCpus`). */
  readonly held: number[];
}

/**
 * Reads the node as this process sees it (Linux; elsewhere every CPU allowed, none held). `held`
 * is read when first asked for: it reads the status of every process on the machine (~5 ms with
 * a hundred), which a job with more ranks than allowed CPUs, bound to nothing, never needs.
 */
export function readNodeCpus(): NodeCpus {
  const allowed = allowedCpus('self') ?? cpus().map((_, i) => i);
  const cores = coresOf(allowed);
  let held: number[] | undefined;
  return {
    allowed,
    cores,
    get held() {
      held ??= heldCpus(cores, [process.pid]);
      return held;
    },
  };
}

/** `Cpus_allowed_list` of a process (`self` or a pid), or null where it cannot be read. */
export function allowedCpus(pid: number | 'self'): number[] | null {
  const status = readStatus(pid);
  const list = status === null ? undefined : field(status, 'Cpus_allowed_list');
  return list === undefined ? null : parseCpuList(list);
}

/**
 * `cpus` grouped by physical core, from sysfs (`topology/thread_siblings_list`); a CPU whose
 * topology cannot be read is a core of its own. Cores are ordered by their first CPU.
 */
export function coresOf(
  cpus: readonly number[],
  siblingsOf: (cpu: number) => number[] | null = readSiblings,
): number[][] {
  const allowed = new Set(cpus);
  const byKey = new Map<string, number[]>();
  for (const cpu of cpus) {
    const siblings = (siblingsOf(cpu) ?? [cpu]).filter((c) => allowed.has(c));
    const core = siblings.includes(cpu) ? siblings : [cpu];
    byKey.set(formatCpuList(core), core);
  }
  return [...byKey.values()].sort((a, b) => a[0]! - b[0]!);
}

function readSiblings(cpu: number): number[] | null {
  try {
    const path = `/sys/devices/system/cpu/cpu${cpu}/topology/thread_siblings_list`;
    return parseCpuList(readFileSync(path, 'latin1'));
  } catch {
    return null;
  }
}

/**
 * CPUs of the cores that user-space processes other than `exclude` are pinned to: processes of
 * any user whose allowed CPUs lie within one core (another job's bound ranks, Open MPI's, a
 * `taskset -c 1` benchmark). Kernel threads (pinned per CPU by design) and zombies do not count.
 * Every process's `/proc/<pid>/status` is world-readable, so this sees other users' jobs too.
 */
export function heldCpus(
  cores: readonly (readonly number[])[],
  exclude: readonly number[] = [],
  procDir = '/proc',
): number[] {
  const coreOf = new Map<number, readonly number[]>();
  for (const core of cores) for (const cpu of core) coreOf.set(cpu, core);
  const held = new Set<number>();
  let pids: string[];
  try {
    pids = readdirSync(procDir).filter((name) => /^\d+$/.test(name));
  } catch {
    return [];
  }
  for (const name of pids) {
    if (exclude.includes(Number(name))) continue;
    const core = pinnedCore(readStatus(name, procDir), coreOf);
    if (core) for (const cpu of core) held.add(cpu);
  }
  return [...held].sort((a, b) => a - b);
}

/** The core a process is pinned within, from its status text; undefined when it is not. */
function pinnedCore(
  status: string | null,
  coreOf: ReadonlyMap<number, readonly number[]>,
): readonly number[] | undefined {
  if (status === null) return undefined;
  if (field(status, 'Kthread') === '1' || field(status, 'VmSize') === undefined) return undefined;
  if (field(status, 'State')?.startsWith('Z')) return undefined;
  const list = field(status, 'Cpus_allowed_list');
  if (list === undefined) return undefined;
  let cpusOfProcess: number[];
  try {
    cpusOfProcess = parseCpuList(list);
  } catch {
    return undefined;
  }
  const core = coreOf.get(cpusOfProcess[0] ?? -1);
  if (!core || cpusOfProcess.length >= coreOf.size) return undefined; // not within one of ours
  return cpusOfProcess.every((c) => core.includes(c)) ? core : undefined;
}

function readStatus(pid: number | string, procDir = '/proc'): string | null {
  try {
    return readFileSync(`${procDir}/${pid}/status`, 'latin1');
  } catch {
    return null; // gone meanwhile, or not Linux
  }
}

function field(status: string, name: string): string | undefined {
  const at = status.indexOf(`\n${name}:`);
  if (at < 0) return undefined;
  const start = at + name.length + 2;
  const end = status.indexOf('\n', start);
  return status.slice(start, end < 0 ? undefined : end).trim();
}
