import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cliBin, waitFor } from '@ssi/cli/testing';
import { wipeSession } from '@ssi/lam';
import {
  markedProcesses,
  type SlurmCluster,
  slurmAvailable,
  startSlurmCluster,
} from '@ssi/slurm-cluster';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES, startJob } from './cr-harness';

// The issue (#17, drain notices): "Under Slurm, the test sends the signal with scancel --signal
// and then restarts the job in a new allocation." A real one-node Slurm (tools/slurm-cluster):
// an sbatch job lamboots and runs the checkpointable heat fixture; `scancel --signal=TERM --batch`
// signals the batch shell, which passes SIGTERM on to mpirun (a shell cannot act on a signal while
// a foreground child runs: the documented pattern is `mpirun … & wait`); mpirun drains, checkpoints
// and exits 75. A second sbatch job lamrestarts that series and ends with the undisturbed result.
const avail = slurmAvailable();
const required = !!process.env.CI || process.env.SSI_SLURM_REQUIRED === '1';
const SUFFIX = `crdrain${process.pid}`;
const work = mkdtempSync(join(tmpdir(), 'ssi-cr-drain-slurm-'));
const HEAT = join(FIXTURES, 'heat-cr.mjs');
const HEAT_ARGS = ['32', '600', '10'];
let c: SlurmCluster;

const cli = (command: string, args = '') =>
  `"${process.execPath}" "${cliBin(command)}" ${args}`.trim();
const universe = () =>
  markedProcesses(c.dir).filter((p) => /lamd\.js|slurm-lamd\.js|heat-cr\.mjs/.test(p.cmd));
const resultOf = (out: string) => /heat result: .*/.exec(out)?.[0] ?? `no result in:\n${out}`;

beforeAll(async () => {
  if (avail.ok) c = await startSlurmCluster();
});

afterEach(async () => {
  if (!c) return;
  for (const p of universe()) {
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

describe('availability', () => {
  it('Slurm can run here (skipped with the reason when not, except in CI)', (ctx) => {
    if (!avail.ok) {
      if (required) throw new Error(`Slurm cannot run on this CI machine: ${avail.reason}`);
      ctx.skip(avail.reason);
    }
    expect(avail).toEqual({ ok: true });
  });
});

describe.skipIf(!avail.ok)('a drain notice under Slurm', () => {
  it('scancel --signal=TERM --batch: mpirun checkpoints and exits 75; lamrestart in a new allocation ends as undisturbed', async () => {
    const ckpt = join(work, 'ckpt');
    const mpirunArgs = `-v -np 2 --ssi cr self --ssi rpi crtcp --ssi crlam_self_dir ${ckpt} ${HEAT} ${HEAT_ARGS.join(' ')}`;
    const env = { LAM_MPI_SESSION_SUFFIX: SUFFIX };
    const first = await c.sbatch(
      [
        'set -u',
        `${cli('lamboot')} || exit 11`,
        // The batch shell passes the batch system's SIGTERM on to mpirun.
        `${cli('mpirun', mpirunArgs)} &`,
        'pid=$!',
        "trap 'kill -TERM $pid' TERM",
        // wait returns early (>128) when the trap ran; mpirun is then still draining.
        'wait $pid; code=$?',
        'while kill -0 $pid 2>/dev/null; do wait $pid; code=$?; done',
        'echo "mpirun exited $code"',
        `${cli('lamhalt')} || exit 14`,
        'exit 0',
      ].join('\n'),
      { name: 'ssi-drain', env, cwd: work },
    );
    await c.waitForState(first.id, 'RUNNING', 30_000);
    await waitFor(
      'mpirun -v in the job to report rank 1 started',
      () => /mpirun: rank 1 is pid/.test(first.readOutput()),
      90_000,
      () => first.readOutput(),
    );
    await new Promise((r) => setTimeout(r, 1000)); // some sweeps: the notice comes mid-run
    expect(first.readOutput()).not.toMatch(/mpirun exited/);
    await c.exec('scancel', ['--signal=TERM', '--batch', first.id]);
    await c.waitForState(first.id, 'COMPLETED', 90_000);
    const out = first.readOutput();
    expect(out).toContain('mpirun: SIGTERM: drain notice: checkpointing the job now');
    expect(out).toContain('mpirun exited 75');
    const commands = [...out.matchAll(/restart it with: lamrestart (\S+)/g)];
    expect(commands.length, out).toBe(1);
    const dir = commands[0]![1]!;
    expect(existsSync(dir), out).toBe(true);

    // A new allocation restarts the series; the reference is an undisturbed run of the same job.
    const second = await c.sbatch(
      [
        'set -u',
        `${cli('lamboot')} || exit 11`,
        `${cli('lamrestart', dir)}; echo "lamrestart exited $?"`,
        `${cli('lamhalt')} || exit 14`,
      ].join('\n'),
      { name: 'ssi-drain-restart', env, cwd: work },
    );
    await c.waitForState(second.id, 'COMPLETED', 120_000);
    const again = second.readOutput();
    expect(again, again).toContain('lamrestart exited 0');
    expect(again).toMatch(/rank 1: restarted at sweep \d+; drain seen: onDrain SIGTERM/);

    const reference = startJob(
      [
        '-np',
        '2',
        '--ssi',
        'cr',
        'self',
        '--ssi',
        'rpi',
        'crtcp',
        '--ssi',
        'crlam_self_dir',
      ].concat([join(work, 'reference'), HEAT, ...HEAT_ARGS]),
    );
    const ran = await reference.done;
    expect(ran.code, reference.out).toBe(0);
    expect(resultOf(again)).toBe(resultOf(reference.out));
    await waitFor(
      'no lamd or rank of the jobs left',
      () => universe().length === 0,
      30_000,
      () => JSON.stringify(universe()),
    );
  });
});
