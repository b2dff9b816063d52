import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, startCli, waitFor } from '@ssi/cli/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { type RunningJob, startJob, workDir } from './external-harness';
import {
  alive,
  heldRing,
  killKept,
  PAUSE_MS,
  RING,
  restoreRecords,
  results,
  STEPS,
  stateOf,
} from './held-ring';

// The issue (#17, the external module): "after a restore the module re-creates the connections"
// — here in a new universe: `lamrestart` of a series of process images starts, for each rank, the
// restore runner, which runs the back end's restart command; the restored process finds the new
// job (the contact the runner publishes), joins it, re-creates its connections and goes on.
// CRIU cannot dump on this kernel, so the test checkpointer emulates one (README "Restart"): its
// "hold" mode keeps the frozen process itself as the image (stopped, outside the old job: the
// ranks run in sessions of their own, fixtures/own-session.mjs, so the old job's end kills only
// the wrapper), and its restart command lets that process run again inside the new job's launch.
// Three ranks run a ring with messages in flight; a drain (`lamcheckpoint --preempt`) takes the
// series and ends the job; the old universe is gone; lamrestart runs the job to the end in a new
// private universe, with the result of an undisturbed run and nothing left running.
let job: RunningJob | undefined;
let cleanup: (() => void) | undefined;
let ctl = '';
afterEach(() => {
  job?.kill();
  killKept(ctl); // if a test failed before they ended
  cleanup?.();
  job = undefined;
  cleanup = undefined;
});

function begin(): ReturnType<typeof workDir> {
  const w = workDir();
  cleanup = w.cleanup;
  ctl = w.ctl;
  return w;
}

describe('lamrestart of a series of process images into a new universe', () => {
  let reference: string[] = [];

  it('an undisturbed run: the reference result', async () => {
    const w = begin();
    job = startJob(['-np', '3', '--ssi', 'rpi', 'crtcp', RING, w.ctl, STEPS, PAUSE_MS]);
    const end = await job.done;
    expect(end.code, job.out).toBe(0);
    reference = results(job.out);
    expect(reference, job.out).toHaveLength(3);
  });

  it('preempted in the middle of a ring, kept, restarted in a new private universe: the same result, nothing left', async () => {
    const w = begin();
    const { dir, pids } = await heldRing(w, (j) => {
      job = j;
    });
    const r = await runCli('lamrestart', [dir], process.env, { timeoutMs: 120_000 });
    const out = r.stdout + r.stderr;
    expect(r.code, out).toBe(0);
    expect(results(out), out).toEqual(reference);
    // The same processes finished the job: restored, not started again.
    for (const pid of pids) {
      await waitFor(`kept process ${pid} to end`, () => !alive(pid), 10_000);
    }
    for (let rank = 0; rank < 3; rank++) {
      const { runner, attached } = restoreRecords(dir, rank);
      expect(attached, `rank ${rank} joined as the kept process`).toBe(pids[rank]);
      expect(alive(runner), `the runner of rank ${rank}`).toBe(false);
    }
  });

  it('the restarted job killed while it runs: its restored processes go with it', async () => {
    const w = begin();
    const { dir, pids } = await heldRing(w, (j) => {
      job = j;
    });
    const restarting = startCli('lamrestart', [dir], process.env);
    try {
      await waitFor(
        'every rank to join the restarted job',
        () => [0, 1, 2].every((r) => restoreRecords(dir, r).attached !== null),
        30_000,
      );
      const runners = [0, 1, 2].map((r) => restoreRecords(dir, r).runner);
      restarting.kill('SIGKILL'); // mpirun (lamrestart runs it): its private universe ends too
      for (const pid of [...pids, ...runners]) {
        await waitFor(`process ${pid} to end with the job`, () => !alive(pid), 20_000);
      }
    } finally {
      restarting.kill('SIGKILL');
    }
  });

  it('bad inputs: a failing restart command, a rank that never joins, a missing image', async () => {
    const w = begin();
    const { dir, pids } = await heldRing(w, (j) => {
      job = j;
    });
    const restart = (...args: string[]) =>
      runCli('lamrestart', [dir, ...args], process.env, { timeoutMs: 60_000 });

    writeFileSync(join(w.ctl, 'restore-mode'), 'fail');
    let r = await restart();
    let out = r.stdout + r.stderr;
    expect(r.code, out).not.toBe(0);
    expect(out).toMatch(/rank \d: the restart command exited with status 4: .*restorer\.mjs/);
    expect(out).toMatch(/test restorer: rank \d: cannot restore/);

    writeFileSync(join(w.ctl, 'restore-mode'), 'never');
    r = await restart('--ssi', 'crmpi_external_restore_timeout', '2');
    out = r.stdout + r.stderr;
    expect(r.code, out).not.toBe(0);
    expect(out).toMatch(
      /rank \d: no restored process joined the new job within 2 s \(crmpi_external_restore_timeout\)/,
    );

    writeFileSync(join(w.ctl, 'restore-mode'), 'fail');
    const { attached } = restoreRecords(dir, 1);
    expect(attached, 'no failed restart let rank 1 join').toBeNull();
    rmSync(join(dir, 'series-1', 'external-1', 'image'), { recursive: true });
    r = await restart();
    out = r.stdout + r.stderr;
    expect(r.code, out).not.toBe(0);
    expect(out).toMatch(/rank 1: the image \S+external-1\/image is missing/);
    // None of the failed restarts let a kept process go.
    for (const pid of pids) expect(stateOf(pid), `process ${pid}`).toBe('T');
  });
});
