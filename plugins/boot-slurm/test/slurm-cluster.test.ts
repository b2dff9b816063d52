import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readSessionInfo, sessionDirFor, wipeSession } from '@ssi/lam';
import {
  markedProcesses,
  type SlurmCluster,
  slurmAvailable,
  startSlurmCluster,
} from '@ssi/slurm-cluster';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { cliBin, envOf, MPI_JOB, waitFor } from './helpers';

// The slurm module on a real Slurm: munged, slurmctld and slurmd of tools/slurm-cluster (one
// node, this host), sbatch jobs that lamboot, run an MPI job and lamhalt.

const avail = slurmAvailable();
const required = !!process.env.CI || process.env.SSI_SLURM_REQUIRED === '1';
const SUFFIX = `sl${process.pid}`;
const work = mkdtempSync(join(tmpdir(), 'ssi-slurm-test-'));
let c: SlurmCluster;

const cli = (command: string, args = '') =>
  `"${process.execPath}" "${cliBin(command)}" ${args}`.trim();

/** The processes of the universe: lamds, the srun node program, MPI ranks. */
const universeProcesses = () =>
  markedProcesses(c.dir).filter((p) => /lamd\.js|slurm-lamd\.js|jobs\.js/.test(p.cmd));

beforeAll(async () => {
  if (!avail.ok) return;
  c = await startSlurmCluster();
});

afterEach(async () => {
  if (!c) return;
  for (const p of universeProcesses()) {
    try {
      process.kill(p.pid, 'SIGKILL');
    } catch {}
  }
  await wipeSession(c.node, SUFFIX, 2000);
});

afterAll(async () => {
  await c?.stop();
  rmSync(work, { recursive: true, force: true });
});

const jobEnv = { LAM_MPI_SESSION_SUFFIX: SUFFIX };

describe('availability', () => {
  it('Slurm can run here (skipped with the reason when not, except in CI)', (ctx) => {
    if (!avail.ok) {
      if (required) throw new Error(`Slurm cannot run on this CI machine: ${avail.reason}`);
      ctx.skip(avail.reason);
    }
    expect(avail).toEqual({ ok: true });
  });
});

describe.skipIf(!avail.ok)('the slurm module in a real sbatch job', () => {
  it('lamboot starts the lamds as one step of the job; an MPI job runs; lamhalt ends the step', async () => {
    const ready = join(work, 'ready');
    const go = join(work, 'go');
    const job = await c.sbatch(
      [
        'set -u',
        `${cli('lamboot', '-v')} || exit 11`,
        `touch ${ready}`,
        `for i in $(seq 600); do [ -e ${go} ] && break; sleep 0.1; done`,
        `[ -e ${go} ] || { echo "the test never said go"; exit 12; }`,
        `${cli('mpirun', `-np 2 ${MPI_JOB} ring`)} || exit 13`,
        `${cli('lamhalt')} || exit 14`,
        'echo "job done"',
      ].join('\n'),
      { name: 'ssi-boot', env: jobEnv, cwd: work },
    );
    await c.waitForState(job.id, 'RUNNING', 30_000);
    await waitFor(
      'lamboot inside the job to finish',
      () => existsSync(ready),
      60_000,
      () => job.readOutput(),
    );
    const steps = await c.squeueSteps(job.id);
    const lamdStep = steps.find((s) => s.name === 'ssi-lamd');
    expect(lamdStep, JSON.stringify(steps)).toMatchObject({ nodes: c.node });
    const info = readSessionInfo(sessionDirFor(c.node, SUFFIX));
    expect(info).toBeDefined();
    // the lamd is a process of that step of that job
    expect(envOf(info!.lamdPid, 'SLURM_JOB_ID')).toBe(job.id);
    expect(envOf(info!.lamdPid, 'SLURM_STEP_ID')).toBe(lamdStep!.step);
    const scontrol = await c.exec('scontrol', ['listpids', job.id]);
    expect(scontrol.stdout).toMatch(
      new RegExp(`^${info!.lamdPid}\\s+${job.id}\\s+${lamdStep!.step}\\s`, 'm'),
    );

    writeFileSync(go, '');
    await c.waitForState(job.id, 'COMPLETED', 60_000);
    const out = job.readOutput();
    expect(out).toMatch(/universe of 1 node\(s\) booted with the slurm boot module/);
    expect(out).toContain('ring: 0 1');
    expect(out).toContain('job done');
    await waitFor(
      'every process of the universe to be gone',
      () => universeProcesses().length === 0,
      15_000,
    );
    expect(existsSync(sessionDirFor(c.node, SUFFIX))).toBe(false);
  });

  it('scancel of a running job leaves no lamd and no rank behind', async () => {
    const job = await c.sbatch(
      [
        `${cli('lamboot')} || exit 11`,
        `${cli('mpirun', `-np 2 ${MPI_JOB} wait`)}`,
        'echo "mpirun ended $?"',
        'sleep 300',
      ].join('\n'),
      { name: 'ssi-cancel', env: jobEnv, cwd: work },
    );
    await c.waitForState(job.id, 'RUNNING', 30_000);
    const out = await waitFor(
      'both ranks waiting in the job output',
      () => {
        const o = job.readOutput();
        return (o.match(/waiting \d+ \d+/g) ?? []).length === 2 ? o : undefined;
      },
      60_000,
      () => job.readOutput(),
    );
    const ranks = [...out.matchAll(/waiting \d+ (\d+)/g)].map((m) => Number(m[1]));
    const lamd = readSessionInfo(sessionDirFor(c.node, SUFFIX))!.lamdPid;
    for (const pid of [...ranks, lamd]) expect(envOf(pid, 'SLURM_JOB_ID')).toBe(job.id);

    await c.scancel(job.id);
    await c.waitForState(job.id, 'CANCELLED', 30_000);
    await waitFor(
      'no lamd, node program or rank after scancel',
      () => universeProcesses().length === 0,
      30_000,
      () => JSON.stringify(universeProcesses()),
    );
    for (const pid of [...ranks, lamd]) expect(existsSync(`/proc/${pid}`)).toBe(false);
  });

  it('the node program failing on the node: the error names the node and the cause, nothing is left', async () => {
    // every task of the step fails at start (node cannot load a module it is told to preload)
    const launcher = 'srun --export=ALL,NODE_OPTIONS=--require=/nonexistent/preload.cjs';
    const job = await c.sbatch(
      [
        `${cli('lamboot', `-v --ssi boot_slurm_launcher "${launcher}"`)}`,
        'echo "lamboot exit $?"',
      ].join('\n'),
      { name: 'ssi-fail', env: jobEnv, cwd: work },
    );
    await c.waitForState(job.id, 'COMPLETED', 60_000);
    const out = job.readOutput();
    expect(out).toMatch(
      new RegExp(
        `lamboot failed on n0 \\(${c.node}\\): srun ended \\(exit \\d+\\) before the lamd called back: .*${c.node}: task 0: Exited with exit code 1`,
      ),
    );
    expect(out).toContain('lamboot exit 1');
    expect(universeProcesses()).toEqual([]);
    expect(existsSync(sessionDirFor(c.node, SUFFIX))).toBe(false);
  });
});
