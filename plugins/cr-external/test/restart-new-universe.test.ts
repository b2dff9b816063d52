import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, waitFor } from '@ssi/cli/testing';
import { afterEach, describe, expect, it } from 'vitest';
import {
  FIXTURES,
  jobDir,
  type RunningJob,
  startJob,
  testCheckpointer,
  workDir,
} from './external-harness';

// The issue (#17, the external module): "after a restore the module re-creates the connections"
// — here in a new universe: `lamrestart` of a series of process images starts, for each rank, the
// restore runner, which runs the back end's restart command; the restored process finds the new
// job (the contact the runner publishes), joins it, re-creates its connections and goes on.
// CRIU cannot dump on this kernel, so the test checkpointer emulates one (README "Restart"): its
// "hold" mode keeps the frozen process itself as the image (stopped, outside the old job: the
// ranks run in sessions of their own, fixtures/own-session.mjs, so the old job's end kills only
// the wrapper), and its restart
// command lets that process run again inside the new job's launch. Three ranks run a ring with
// messages in flight; a drain (`lamcheckpoint --preempt`) takes the series and ends the job; the
// old universe is gone; lamrestart runs the job to the end in a new private universe, with the
// result of an undisturbed run and nothing left running.
const STEPS = '300';
const PAUSE_MS = '10';
const RING = join(FIXTURES, 'ring.mjs');
const RESTORER = join(FIXTURES, 'restorer.mjs');
const OWN_SESSION = join(FIXTURES, 'own-session.mjs');

let job: RunningJob | undefined;
let cleanup: (() => void) | undefined;
let ctl = '';
afterEach(() => {
  job?.kill();
  // The kept processes and their keepers, if a test failed before they ended.
  for (const f of existsSync(ctl) ? readdirSync(ctl) : []) {
    if (!/^held-\d+\.json$/.test(f)) continue;
    const { pid, keeper } = JSON.parse(readFileSync(join(ctl, f), 'utf8'));
    for (const p of [pid, keeper]) kill(p);
  }
  cleanup?.();
  job = undefined;
  cleanup = undefined;
});

function kill(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // gone
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Process state letter from /proc (T: stopped), or null when it is gone. */
function stateOf(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  } catch {
    return null;
  }
}

/** "after 300 steps … sum N" per rank, sorted by rank. */
function results(out: string): string[] {
  return [
    ...out.matchAll(/rank (\d): ring OK after (\d+) steps, \d+ checkpoints continued, sum (\d+)/g),
  ]
    .sort((a, b) => Number(a[1]) - Number(b[1]))
    .map((m) => `rank ${m[1]}: ${m[2]} steps, sum ${m[3]}`);
}

/** A ring job of 3 ranks, checkpointed by the external module in "hold" mode, preempted. */
async function heldJob(w: ReturnType<typeof workDir>): Promise<{ dir: string; pids: number[] }> {
  writeFileSync(join(w.ctl, 'mode'), 'hold');
  job = startJob([
    '-np',
    '3',
    '--ssi',
    'cr',
    'external',
    '--ssi',
    'rpi',
    'crtcp',
    '--ssi',
    'crlam_external_dir',
    w.root,
    '--ssi',
    'crmpi_external_checkpoint_cmd',
    testCheckpointer(w.ctl),
    '--ssi',
    'crmpi_external_restart_cmd',
    `${process.execPath} ${RESTORER} {image} {rank} ${w.ctl}`,
    OWN_SESSION,
    process.execPath,
    RING,
    w.ctl,
    STEPS,
    PAUSE_MS,
  ]);
  await job.lines(/ring running/, 3, 'the three ranks to run the ring');
  const asked = await runCli('lamcheckpoint', ['--preempt', String(job.pid)], process.env, {
    timeoutMs: 90_000,
  });
  expect(asked.code, asked.stdout + asked.stderr + job.out).toBe(0);
  const end = await job.done;
  expect(end.code, job.out).toBe(75);
  const held = [0, 1, 2].map((r) => join(w.ctl, `held-${r}.json`));
  await waitFor('the keeper to hold every rank', () => held.every(existsSync), 30_000);
  const pids = held.map((f) => JSON.parse(readFileSync(f, 'utf8')).pid as number);
  for (const pid of pids) expect(stateOf(pid), `process ${pid} is kept stopped`).toBe('T');
  return { dir: jobDir(w.root), pids };
}

describe('lamrestart of a series of process images into a new universe', () => {
  let reference: string[] = [];

  it('an undisturbed run: the reference result', async () => {
    const w = workDir();
    cleanup = w.cleanup;
    ctl = w.ctl;
    job = startJob(['-np', '3', '--ssi', 'rpi', 'crtcp', RING, w.ctl, STEPS, PAUSE_MS]);
    const end = await job.done;
    expect(end.code, job.out).toBe(0);
    reference = results(job.out);
    expect(reference, job.out).toHaveLength(3);
  });

  it('preempted in the middle of a ring, kept, restarted in a new private universe: the same result, nothing left', async () => {
    const w = workDir();
    cleanup = w.cleanup;
    ctl = w.ctl;
    const { dir, pids } = await heldJob(w);
    expect(job!.out).not.toMatch(/ring OK/);

    const r = await runCli('lamrestart', [dir], process.env, { timeoutMs: 120_000 });
    const out = r.stdout + r.stderr;
    expect(r.code, out).toBe(0);
    expect(results(out), out).toEqual(reference);
    // The same processes finished the job: restored, not started again.
    for (const pid of pids) {
      await waitFor(`kept process ${pid} to end`, () => !alive(pid), 10_000);
    }
    const series = readdirSync(dir).filter((d) => d.startsWith('series-'));
    for (let rank = 0; rank < 3; rank++) {
      const home = join(dir, series[0]!, `external-${rank}`);
      const { runner } = JSON.parse(readFileSync(join(home, 'contact.json'), 'utf8'));
      expect(alive(runner), `the runner of rank ${rank}`).toBe(false);
      expect(JSON.parse(readFileSync(join(home, 'attached.json'), 'utf8')).pid).toBe(pids[rank]);
    }
  });

  it('bad inputs: a failing restart command, a rank that never joins, a missing image', async () => {
    const w = workDir();
    cleanup = w.cleanup;
    ctl = w.ctl;
    const { dir, pids } = await heldJob(w);
    const restart = (...args: string[]) =>
      runCli('lamrestart', [dir, ...args], process.env, { timeoutMs: 120_000 });

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
    const series = readdirSync(dir).find((d) => d.startsWith('series-'))!;
    rmSync(join(dir, series, 'external-1', 'image'), { recursive: true });
    r = await restart();
    out = r.stdout + r.stderr;
    expect(r.code, out).not.toBe(0);
    expect(out).toMatch(/rank 1: the image \S+external-1\/image is missing/);
    // None of the failed restarts let a kept process go.
    for (const pid of pids) expect(stateOf(pid), `process ${pid}`).toBe('T');
  });
});
