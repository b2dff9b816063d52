import type { ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, resolve } from 'node:path';
import { sessionUser } from '@ssi/lam';
import { afterEach, describe, expect, it } from 'vitest';
import { startCli, waitChild, waitFor } from '../src/testing';

/**
 * Jobs of 64 ranks on one machine (oversubscribed) through mpirun's embedded default, with the
 * tcp rpi (on one node sm would be chosen) connecting on first use, its default: hello, a ring
 * and an allreduce; and a rank that dies before anyone connected to it. The eager mesh
 * (rpi_tcp_lazy 0) runs the same job. Only what this file started is looked at (its mpirun pids).
 */
const fixtures = resolve(import.meta.dirname, 'fixtures');
const program = resolve(fixtures, 'large-job.mjs');
const live = new Set<ChildProcess>();
const startedPids = new Set<number>();

function mpirun(args: string[], timeoutMs = 240_000) {
  const child = startCli('mpirun', args, { ...process.env }, { cwd: fixtures });
  live.add(child);
  if (child.pid !== undefined) startedPids.add(child.pid);
  return waitChild(child, `mpirun ${args.join(' ')}`, timeoutMs).finally(() => live.delete(child));
}

/** Rank processes of the private universes of the mpiruns this file started. */
function strayRanks(): number[] {
  const out: number[] = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const dir = readFileSync(`/proc/${pid}/environ`, 'utf8')
        .split('\0')
        .find((e) => e.startsWith('LAM_MPI_SESSION_DIR='));
      if (!dir) continue;
      const name = basename(dir.slice('LAM_MPI_SESSION_DIR='.length));
      if (!name.startsWith(`ssi-${sessionUser()}@`)) continue;
      if (![...startedPids].some((p) => name.endsWith(`-mpirun-${p}`))) continue;
      if (/\) [ZX] /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'))) continue;
      out.push(Number(pid));
    } catch {}
  }
  return out;
}

afterEach(async () => {
  for (const c of live) c.kill('SIGKILL');
  await waitFor('no rank of ours left running', () => strayRanks().length === 0, 20_000).catch(
    (err) => {
      for (const pid of strayRanks()) process.kill(pid, 'SIGKILL');
      throw err;
    },
  );
  expect(
    readdirSync(tmpdir()).filter((d) => [...startedPids].some((p) => d.endsWith(`-mpirun-${p}`))),
  ).toEqual([]);
});

const TCP = ['--ssi', 'rpi', 'tcp'];

describe('mpirun: 64 ranks on one machine (oversubscribed), connections on first use', () => {
  it.each([
    ['on first use (the default)', []],
    ['the eager mesh (rpi_tcp_lazy 0)', ['--ssi', 'rpi_tcp_lazy', '0']],
  ])('hello, a ring and an allreduce, connections %s', async (_how, ssi) => {
    const r = await mpirun(['-np', '64', ...TCP, ...ssi, program, 'run']);
    expect(r.code, r.stderr).toBe(0);
    for (let k = 0; k < 64; k++) expect(r.stdout).toContain(`hello from rank ${k} of 64`);
    expect(r.stdout).toContain('[0] ring: 64 hops');
    expect(r.stdout).toContain(`[0] allreduce: ${(64 * 63) / 2}`);
  });

  it('a rank that dies before anyone connected to it ends the job, named', async () => {
    const r = await mpirun(['-np', '64', ...TCP, program, 'die', '37']);
    expect(r.code, r.stderr).toBe(5);
    expect(r.stderr).toMatch(/mpirun: rank 37 \(pid \d+ on n0\) exited with code 5/);
  });
});
