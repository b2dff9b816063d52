import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { killAllJobs, launchJob } from '@ssi/mpi/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../src/testing';

afterEach(() => killAllJobs());

/**
 * mpirun's rank binding with real processes: each rank prints its Cpus_allowed_list, and what
 * `-v` says the lamd chose must be what the rank got. Whether a 2-rank job is bound depends on
 * the machine (other engineers' pinned processes hold CPUs), so the checks follow what mpirun
 * reports; the placement rules themselves are tested with a fixed node in @ssi/lam.
 */
const fixtures = resolve(import.meta.dirname, 'fixtures');
const env = { ...process.env, LAM_MPI_SESSION_SUFFIX: `binding-test-${process.pid}` };
const mine = /Cpus_allowed_list:\s*(\S+)/.exec(readFileSync('/proc/self/status', 'utf8'))![1]!;

async function mpirun(args: string[]) {
  return runCli('mpirun', args, env, { cwd: fixtures, timeoutMs: 90_000 });
}

/** rank → [what -v says, the CPUs the rank read back]. */
function ranksOf(r: { stdout: string; stderr: string }): Map<number, [string, string]> {
  const out = new Map<number, [string, string]>();
  for (const m of r.stderr.matchAll(/mpirun: rank (\d+) is pid \d+ on n0 \([^)]*\)(.*)/g)) {
    out.set(Number(m[1]), [m[2]!, '']);
  }
  for (const m of r.stdout.matchAll(/affinity rank=(\d+) pid=\d+ cpus=(\S+)/g)) {
    const said = out.get(Number(m[1]));
    if (said) said[1] = m[2]!;
  }
  return out;
}

describe('mpirun --bind-to', () => {
  it('binds as -v says: a CPU each, or nothing and why', async () => {
    const r = await mpirun(['-v', '-np', '2', 'affinity.mjs']);
    expect(r.code, r.stderr).toBe(0);
    const ranks = ranksOf(r);
    expect([...ranks.keys()].sort()).toEqual([0, 1]);
    const bound: string[] = [];
    for (const [rank, [said, got]] of ranks) {
      const on = /^, on CPU (\S+): bound to a (CPU|core|hardware thread) each/.exec(said);
      if (on) {
        expect(got, `rank ${rank}: ${said}`).toBe(on[1]);
        bound.push(got);
      } else {
        expect(said, `rank ${rank}`).toMatch(/^: not bound: /);
        expect(got, `rank ${rank}: ${said}`).toBe(mine);
      }
    }
    if (bound.length === 2) expect(bound[0]).not.toBe(bound[1]);
  });

  it('--bind-to none binds nothing, and says so', async () => {
    const r = await mpirun(['-v', '--bind-to', 'none', '-np', '2', 'affinity.mjs']);
    expect(r.code, r.stderr).toBe(0);
    for (const [rank, [said, got]] of ranksOf(r)) {
      expect(said, `rank ${rank}`).toBe(': not bound (lam_bind_to none)');
      expect(got, `rank ${rank}`).toBe(mine);
    }
  });

  const cpuCount = () =>
    mine.split(',').reduce((n, part) => {
      const [a, b] = part.split('-').map(Number);
      return n + (b === undefined ? 1 : b - a! + 1);
    }, 0);

  it('a job larger than the CPUs it may use is bound in blocks of consecutive ranks, or not at all with lam_bind_oversubscribed 0', async () => {
    const np = 2 * cpuCount();
    const r = await mpirun(['-v', '-np', String(np), 'affinity.mjs']);
    expect(r.code, r.stderr).toBe(0);
    const ranks = [...ranksOf(r)].sort((a, b) => a[0] - b[0]);
    expect(ranks).toHaveLength(np);
    const cpus: string[] = [];
    for (const [rank, [said, got]] of ranks) {
      const on = /^, on CPU (\S+): bound in blocks of up to \d+ consecutive ranks per CPU/.exec(
        said,
      );
      if (on) {
        expect(got, `rank ${rank}: ${said}`).toBe(on[1]);
        cpus.push(got);
      } else {
        // Every CPU held by other engineers' pinned processes: not bound, and why.
        expect(said, `rank ${rank}`).toMatch(/^: not bound: oversubscribed, no free CPU/);
        expect(got).toBe(mine);
      }
    }
    // Consecutive ranks share a CPU: the CPU changes at most once per block.
    if (cpus.length === np)
      expect(cpus.filter((c, i) => i > 0 && c !== cpus[i - 1]).length).toBeLessThan(np / 2);
    const none = await mpirun([
      '-v',
      '--ssi',
      'lam_bind_oversubscribed',
      '0',
      '-np',
      String(cpuCount() + 1),
      'affinity.mjs',
    ]);
    expect(none.code, none.stderr).toBe(0);
    for (const [rank, [said, got]] of ranksOf(none)) {
      expect(said, `rank ${rank}`).toMatch(/^: not bound: oversubscribed \(/);
      expect(got).toBe(mine);
    }
    const bad = await mpirun([
      '--ssi',
      'lam_bind_oversubscribed',
      '-1',
      '-np',
      '2',
      'affinity.mjs',
    ]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(
      /lam_bind_oversubscribed is "-1"; expected a whole number of ranks a CPU >= 0/,
    );
  });

  it('refuses an unknown policy before starting anything', async () => {
    const r = await mpirun(['--bind-to', 'socket', '-np', '2', 'affinity.mjs']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /lam_bind_to \(mpirun --bind-to\) is "socket"; expected one of: core, none/,
    );
    expect(r.stdout).not.toMatch(/affinity/);
  });

  it('laminfo says what binding mpirun would choose here', async () => {
    const r = await runCli('laminfo', [], env, { cwd: fixtures });
    expect(r.stdout).toMatch(
      /Rank binding: core \(lam_bind_to, default\); this node: CPUs \S+ allowed in \d+ core\(s\)/,
    );
    const none = await runCli('laminfo', ['--ssi', 'lam_bind_to', 'none'], env, { cwd: fixtures });
    expect(none.stdout).toMatch(/Rank binding: none \(lam_bind_to, command line\)/);
    const params = await runCli('laminfo', ['--param', 'all', 'all'], env, { cwd: fixtures });
    expect(params.stdout).toMatch(/lam_bind_to/);
  });

  it("launchJob's bind places ranks as mpirun's lamd does, and reports it", async () => {
    const r = await launchJob({
      np: 2,
      program: resolve(fixtures, 'affinity-mpi.mjs'),
      ssi: { rpi: 'tcp' },
      bind: 'core',
      timeoutMs: 60_000,
    });
    expect(r.ok, r.failure).toBe(true);
    expect(r.bindings).toHaveLength(2);
    for (let rank = 0; rank < 2; rank++) {
      const got = /affinity rank=\d+ cpus=(\S+)/.exec(r.stdout[rank]!)?.[1];
      const b = r.bindings![rank]!;
      expect(got, `rank ${rank}: ${b.reason}`).toBe(b.cpus ?? mine);
    }
    const unbound = await launchJob({
      np: 1,
      program: resolve(fixtures, 'affinity-mpi.mjs'),
      ssi: { rpi: 'tcp' },
      timeoutMs: 60_000,
    });
    expect(unbound.bindings).toBeUndefined();
    expect(unbound.stdout[0]).toContain(`cpus=${mine}`);
  });
});
