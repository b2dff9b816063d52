import { join } from 'node:path';
import { runCli } from '@ssi/cli/testing';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { checkpointRoot, FIXTURES, lamrestart, type RunningJob, startJob } from './cr-harness';

// The issue (#17, drain notices and preemption): a notice that the job must stop soon —
// `lamcheckpoint --preempt <job>` or SIGTERM to mpirun, as a batch system sends before it kills
// a job — reaches the program (`mpi.cr.onDrain`, `mpi.cr.draining`), a checkpoint is taken at
// once, mpirun exits 75 ("checkpointed, restart me") printing the lamrestart command once, and
// lamrestart of that series ends with the result of an undisturbed run. A drain whose checkpoint
// fails ends as a plain stop (143).
const HEAT = join(FIXTURES, 'heat-cr.mjs');
/** 32x32 plate, 400 sweeps, 10 ms between sweeps: a few seconds, long enough to be stopped. */
const HEAT_ARGS = ['32', '400', '10'];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const ck = checkpointRoot();
let job: RunningJob | undefined;
let reference = '';
afterEach(() => {
  job?.kill();
  job = undefined;
});
afterAll(() => ck.cleanup());

function heat(name: string, rpi = 'crtcp'): RunningJob {
  const dir = join(ck.root, name);
  const args = ['-v', '-np', '2', '--ssi', 'cr', 'self', '--ssi', 'rpi', rpi];
  args.push('--ssi', 'crlam_self_dir', dir, HEAT, ...HEAT_ARGS);
  job = startJob(args, process.env, 120_000);
  return job;
}

/** Waits until both ranks run and have done some sweeps (the notice comes mid-run). */
async function running(j: RunningJob): Promise<void> {
  await j.lines(/mpirun: rank 1 is pid/, 1, 'mpirun -v to report rank 1 started', 60_000);
  await sleep(1000);
  expect(j.child.exitCode, `the job ended before the drain notice:\n${j.out}`).toBeNull();
}

const resultOf = (out: string) => /heat result: .*/.exec(out)?.[0] ?? `no result in:\n${out}`;

/** The job ended 75 after one checkpoint, saying once how to restart it: the directory. */
function preempted(out: string, code: number | null, cause: string): string {
  expect(code, out).toBe(75);
  expect(out).toContain(`mpirun: ${cause}: drain notice: checkpointing the job now`);
  const commands = [...out.matchAll(/restart it with: lamrestart (\S+)/g)];
  expect(commands.length, out).toBe(1);
  expect(out).not.toMatch(/heat result/);
  return commands[0]![1]!;
}

/** lamrestart of the series: the undisturbed result, and every rank saw the notice before it. */
async function restartsLikeUndisturbed(dir: string, cause: string): Promise<void> {
  const r = await lamrestart(dir);
  const out = r.stdout + r.stderr;
  expect(r.code, out).toBe(0);
  expect(resultOf(out)).toBe(reference);
  for (const rank of [0, 1]) {
    expect(out).toContain(`rank ${rank}: restarted at sweep`);
    expect(out).toMatch(
      new RegExp(
        `rank ${rank}: restarted at sweep \\d+; drain seen: onDrain ${cause}, draining true`,
      ),
    );
  }
}

describe('drain notices (a checkpointable heat run on this machine)', () => {
  it('an undisturbed run: the reference result', async () => {
    const r = await heat('reference').done;
    expect(r.code, job!.out).toBe(0);
    reference = resultOf(job!.out);
    expect(reference).toMatch(/heat result: 32x32 plate, 400 sweeps/);
  });

  it('SIGTERM to mpirun: the ranks see it, a checkpoint, exit 75, the lamrestart command; the restart ends as undisturbed', async () => {
    const j = heat('sigterm');
    await running(j);
    j.child.kill('SIGTERM');
    const r = await j.done;
    const dir = preempted(j.out, r.code, 'SIGTERM');
    expect(dir).toContain(join(ck.root, 'sigterm'));
    await restartsLikeUndisturbed(dir, 'SIGTERM');
  });

  it('lamcheckpoint --preempt: the same, and lamcheckpoint reports the series and the command', async () => {
    const j = heat('preempt');
    await running(j);
    const asked = await runCli('lamcheckpoint', ['--preempt', String(j.pid)], process.env, {
      timeoutMs: 90_000,
    });
    expect(asked.code, asked.stdout + asked.stderr).toBe(0);
    expect(asked.stdout).toMatch(
      /job \S+ preempted: it stops now \(mpirun exits 75\); restart it with: lamrestart \S+/,
    );
    const r = await j.done;
    const dir = preempted(j.out, r.code, 'lamcheckpoint --preempt');
    await restartsLikeUndisturbed(dir, 'lamcheckpoint --preempt');
  });

  it('a drain whose checkpoint fails (rpi tcp cannot be checkpointed) stops the job with 143 and says why', async () => {
    const j = heat('fails', 'tcp');
    await running(j);
    j.child.kill('SIGTERM');
    const r = await j.done;
    expect(r.code, j.out).toBe(143);
    expect(j.out).toMatch(
      /SIGTERM: the checkpoint of the drain failed \(.+\); stopping the job without one/,
    );
    expect(j.out).not.toMatch(/lamrestart/);
  });
});
