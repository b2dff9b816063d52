import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { schedAvailable, schedYield } from '../src/index';
import { addonFile, resetSchedForTests } from '../src/sched-yield';

const SPINNER = join(import.meta.dirname, 'fixtures', 'spinner.mjs');
const SPIN_MS = 300;
const started: ChildProcess[] = [];

afterEach(() => {
  for (const p of started.splice(0)) p.kill('SIGKILL');
  resetSchedForTests();
});

/** The first CPU this process may run on (a container's or Slurm's cpuset need not hold CPU 0). */
function firstAllowedCpu(): number {
  const list = /Cpus_allowed_list:\s*(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'));
  if (!list) throw new Error('no Cpus_allowed_list in /proc/self/status: cannot pick a CPU here');
  return Number(list[1]);
}

/** Runs the spinner pinned to `cpu`; resolves its SWITCHES line (fails loudly after 20 s). */
function spinner(cpu: number): Promise<{ yielding: number; spinning: number }> {
  const args = ['-c', String(cpu), process.execPath, SPINNER, addonFile(), String(SPIN_MS)];
  const p = spawn('taskset', args, {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.push(p);
  let out = '';
  p.stdout!.on('data', (d) => (out += d));
  p.stderr!.on('data', (d) => (out += d));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () =>
        reject(new Error(`spinner on CPU ${cpu}: no SWITCHES line within 20 s; output: ${out}`)),
      20_000,
    );
    p.on('exit', () => {
      clearTimeout(timer);
      const line = /SWITCHES (.*)/.exec(out);
      if (line) resolve(JSON.parse(line[1]!));
      else reject(new Error(`spinner on CPU ${cpu} exited without SWITCHES; output: ${out}`));
    });
  });
}

describe('@ssi/sched: sched_yield for Node', () => {
  it('the addon is built here (the CI machine has g++, make and python3)', () => {
    expect(schedAvailable()).toEqual({ ok: true });
    for (let i = 0; i < 1000; i++) schedYield();
  });

  it('without the addon: says which file is missing and how to build it; schedYield throws that', () => {
    const missing = join(import.meta.dirname, 'no-such-dir', 'ssi_sched.node');
    const s = schedAvailable(missing);
    expect(s.ok).toBe(false);
    const reason = (s as { reason: string }).reason;
    expect(reason).toContain(missing);
    expect(reason).toContain('node scripts/build-native.mjs');
    expect(() => schedYield()).toThrow(reason);
  });

  it('two processes spinning on one CPU: with yields they take turns at every call, without only when the time slice ends', async () => {
    expect(existsSync('/proc/self/status'), 'Linux /proc is needed to count context switches').toBe(
      true,
    );
    const cpu = firstAllowedCpu();
    const [a, b] = await Promise.all([spinner(cpu), spinner(cpu)]);
    // Yielding, each turn hands the CPU over (thousands in 300 ms); spinning, the scheduler
    // switches every few milliseconds (tens). Other programs on that CPU add switches to both.
    for (const s of [a, b]) expect(s.yielding).toBeGreaterThan(10 * s.spinning + 100);
  });
});
