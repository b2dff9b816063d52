import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { planBinding } from '../src/binding/bind-plan';
import { boundArgv } from '../src/binding/bound-command';
import { formatCpuList, parseCpuList } from '../src/binding/cpu-list';
import { coresOf, heldCpus, type NodeCpus, readNodeCpus } from '../src/binding/node-cpus';

/** Pure parts of rank binding: CPU lists, topology, pinned processes, the plan. */

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('CPU lists', () => {
  it('parses and formats what /proc and taskset write', () => {
    expect(parseCpuList('0-3,8,10-11\n')).toEqual([0, 1, 2, 3, 8, 10, 11]);
    expect(parseCpuList('5')).toEqual([5]);
    expect(parseCpuList('')).toEqual([]);
    expect(formatCpuList([5, 0, 1, 2, 8, 10, 11])).toBe('0-2,5,8,10-11');
    expect(formatCpuList([1])).toBe('1');
  });

  it('refuses what is not a CPU list, naming it', () => {
    expect(() => parseCpuList('0-x')).toThrow(/not a CPU list: "0-x"/);
    expect(() => parseCpuList('3-1')).toThrow(/runs backwards/);
  });
});

describe('cores', () => {
  const siblings = (cpu: number) => [cpu - (cpu % 2), cpu - (cpu % 2) + 1]; // 2 threads a core

  it('groups hardware threads of a core, within the allowed CPUs', () => {
    expect(coresOf([0, 1, 2, 3], siblings)).toEqual([
      [0, 1],
      [2, 3],
    ]);
    expect(coresOf([1, 2, 3], siblings)).toEqual([[1], [2, 3]]);
    expect(coresOf([0, 1], () => null)).toEqual([[0], [1]]);
  });
});

describe('held CPUs', () => {
  /** A fake /proc with one status file per process. */
  function fakeProc(procs: Record<number, string>): string {
    const dir = mkdtempSync(join(tmpdir(), 'ssi-bind-proc-'));
    dirs.push(dir);
    for (const [pid, status] of Object.entries(procs)) {
      mkdirSync(join(dir, pid));
      writeFileSync(join(dir, pid, 'status'), status);
    }
    return dir;
  }
  const status = (cpus: string, extra = 'VmSize:\t1000 kB\n', state = 'S (sleeping)') =>
    `Name:\tx\nState:\t${state}\n${extra}Cpus_allowed_list:\t${cpus}\n`;
  const cores = [[0], [1], [2], [3]];

  it('counts user processes pinned within one core, of anyone', () => {
    const proc = fakeProc({ 10: status('0-3'), 11: status('2'), 12: status('1') });
    expect(heldCpus(cores, [], proc)).toEqual([1, 2]);
  });

  it('leaves out kernel threads, zombies, processes over several cores and excluded pids', () => {
    const proc = fakeProc({
      20: status('0', ''), // kernel thread: no memory
      21: status('1', 'Kthread:\t1\nVmSize:\t0 kB\n'),
      22: status('2', undefined, 'Z (zombie)'),
      23: status('2-3'),
      24: status('3'),
      25: status('9'), // a CPU this process may not use
    });
    expect(heldCpus(cores, [24], proc)).toEqual([]);
    expect(heldCpus(cores, [], proc)).toEqual([3]);
  });

  it('marks the whole core of a process pinned to one of its threads', () => {
    const proc = fakeProc({ 30: status('1') });
    expect(
      heldCpus(
        [
          [0, 1],
          [2, 3],
        ],
        [],
        proc,
      ),
    ).toEqual([0, 1]);
  });
});

describe('readNodeCpus', () => {
  it('reads the held CPUs when asked for them, as heldCpus sees them', () => {
    const n = readNodeCpus();
    expect(n.allowed.length).toBeGreaterThan(0);
    expect(n.held).toEqual(heldCpus(n.cores, [process.pid]));
    expect(n.held).toBe(n.held); // read once
  });
});

describe('planBinding', () => {
  const node = (allowed: number[], held: number[] = [], perCore = 1): NodeCpus => {
    const cores: number[][] = [];
    for (let i = 0; i < allowed.length; i += perCore) cores.push(allowed.slice(i, i + perCore));
    return { allowed, cores, held };
  };

  it('binds each rank to a CPU of its own when they fit', () => {
    const p = planBinding('core', 2, node([0, 1]));
    expect(p.cpus).toEqual([[0], [1]]);
    expect(p.reason).toMatch(/^bound to a CPU each \(2 rank\(s\) here, CPUs 0-1 allowed\)$/);
  });

  it('uses only the allowed CPUs (a cpuset), in order', () => {
    expect(planBinding('core', 2, node([2, 5, 7])).cpus).toEqual([[2], [5]]);
  });

  it('binds nothing when oversubscribed or told none', () => {
    // Not even asking which CPUs others hold (readNodeCpus reads every process's status for it).
    const unread = {
      ...node([0, 1]),
      get held(): number[] {
        throw new Error('held was read for an oversubscribed job');
      },
    };
    const over = planBinding('core', 3, unread);
    expect(over.cpus).toBeNull();
    expect(over.reason).toMatch(/not bound: oversubscribed \(3 rank\(s\) here, CPUs 0-1 allowed\)/);
    expect(planBinding('none', 1, node([0, 1]))).toEqual({
      cpus: null,
      reason: 'not bound (lam_bind_to none)',
    });
  });

  it('binds an oversubscribed job in blocks of consecutive ranks, one per CPU, when asked', () => {
    const four = planBinding('core', 4, node([0, 1]), [], 4);
    expect(four.cpus).toEqual([[0], [0], [1], [1]]);
    expect(four.reason).toMatch(
      /^bound in blocks of up to 2 consecutive ranks per CPU: oversubscribed \(4 rank\(s\) here, CPUs 0-1 allowed; lam_bind_oversubscribed 4\)$/,
    );
    expect(planBinding('core', 8, node([0, 1]), [], 4).cpus).toEqual([
      [0],
      [0],
      [0],
      [0],
      [1],
      [1],
      [1],
      [1],
    ]);
    // Uneven: the first CPU takes the larger block.
    expect(planBinding('core', 5, node([0, 1]), [], 4).cpus).toEqual([[0], [0], [0], [1], [1]]);
    // Hardware threads: blocks go to separate cores first.
    expect(planBinding('core', 8, node([0, 1, 2, 3], [], 2), [], 4).cpus).toEqual([
      [0],
      [0],
      [2],
      [2],
      [1],
      [1],
      [3],
      [3],
    ]);
    // CPUs held by pinned processes or reserved for this launcher's other jobs are left out while
    // any is free; with none free, nothing is bound.
    expect(planBinding('core', 3, node([0, 1], [0]), [], 4).cpus).toEqual([[1], [1], [1]]);
    expect(planBinding('core', 3, node([0, 1]), [1], 4).cpus).toEqual([[0], [0], [0]]);
    const none = planBinding('core', 3, node([0, 1], [0]), [1], 4);
    expect(none.cpus).toBeNull();
    expect(none.reason).toMatch(/^not bound: oversubscribed, no free CPU .*CPU\(s\) 0-1 held/);
    // More ranks a CPU than asked for, or 0: not bound.
    const many = planBinding('core', 9, node([0, 1]), [], 4);
    expect(many.cpus).toBeNull();
    expect(many.reason).toMatch(
      /^not bound: oversubscribed, 5 ranks a CPU, more than lam_bind_oversubscribed 4 /,
    );
    expect(planBinding('core', 4, node([0, 1]), [], 0).reason).toMatch(
      /^not bound: oversubscribed \(/,
    );
    // Jobs that fit and lam_bind_to none are not affected.
    expect(planBinding('core', 2, node([0, 1]), [], 4).cpus).toEqual([[0], [1]]);
    expect(planBinding('none', 4, node([0, 1]), [], 4).cpus).toBeNull();
  });

  it('keeps off CPUs other processes or jobs hold, and binds nothing rather than stack', () => {
    expect(planBinding('core', 1, node([0, 1], [0])).cpus).toEqual([[1]]);
    expect(planBinding('core', 1, node([0, 1]), [1]).cpus).toEqual([[0]]);
    const full = planBinding('core', 2, node([0, 1], [0]));
    expect(full.cpus).toBeNull();
    expect(full.reason).toMatch(/not bound: 1 free CPU\(s\) for 2 rank\(s\).*CPU\(s\) 0 held/);
    expect(planBinding('core', 2, node([0, 1]), [0, 1]).cpus).toBeNull();
  });

  it('gives whole cores, then single hardware threads spread over the cores', () => {
    const smt = node([0, 1, 2, 3], [], 2);
    expect(planBinding('core', 2, smt).cpus).toEqual([
      [0, 1],
      [2, 3],
    ]);
    const threads = planBinding('core', 3, smt);
    expect(threads.cpus).toEqual([[0], [2], [1]]);
    expect(threads.reason).toMatch(/^bound to a hardware thread each/);
  });
});

describe('boundArgv', () => {
  it('runs the program through taskset with the CPU list', () => {
    expect(boundArgv('/usr/bin/taskset', [0, 1, 3], ['/bin/node', 'a.js', '-x'])).toEqual([
      '/usr/bin/taskset',
      '-c',
      '0-1,3',
      '/bin/node',
      'a.js',
      '-x',
    ]);
  });
});
