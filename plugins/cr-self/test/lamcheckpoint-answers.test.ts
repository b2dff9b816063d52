import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CheckpointStore } from '@ssi/mpi';
import { afterEach, describe, expect, it } from 'vitest';
import {
  checkpointRoot,
  FIXTURES,
  jobDir,
  lamcheckpoint,
  type RunningJob,
  startJob,
} from './cr-harness';

// The issue: "lamcheckpoint on a job that cannot checkpoint, twice at once, and during finalize
// each give a clear answer and leave the job intact".
let job: RunningJob | undefined;
let cleanup: (() => void) | undefined;
afterEach(() => {
  job?.kill();
  cleanup?.();
  job = undefined;
  cleanup = undefined;
});

const HOLD = join(FIXTURES, 'hold.mjs');

/** A 2-rank hold job with `ssi` settings; the go file lives in the test's checkpoint root. */
function holdJob(ssi: string[], mode?: string): { go: string; root: string } {
  const ck = checkpointRoot();
  cleanup = ck.cleanup;
  const go = join(ck.root, 'go');
  const root = join(ck.root, 'ckpt');
  job = startJob([
    '-np',
    '2',
    ...ssi,
    '--ssi',
    'crlam_self_dir',
    root,
    HOLD,
    go,
    ...(mode ? [mode] : []),
  ]);
  return { go, root };
}

async function letGoAndEnd(go: string): Promise<void> {
  writeFileSync(go, '');
  const ended = await job!.done;
  expect(ended.code, job!.out).toBe(0);
  expect(job!.out.match(/hold OK/g)?.length, job!.out).toBe(2);
}

describe('lamcheckpoint gives a clear answer and leaves the job intact', () => {
  it('on a job whose rpi cannot checkpoint: names tcp and crtcp', async () => {
    const { go, root } = holdJob(['--ssi', 'cr', 'self', '--ssi', 'rpi', 'tcp']);
    await job!.lines(/ready/, 2, 'both ranks ready');
    const r = await lamcheckpoint(job!.pid);
    expect(r.stderr).toMatch(
      /lamcheckpoint: checkpoint refused: rank 0: the rpi `tcp` cannot checkpoint: run with --ssi rpi crtcp/,
    );
    expect(r.code).toBe(1);
    await letGoAndEnd(go);
    const store = await CheckpointStore.open(jobDir(root), { create: false });
    expect(await store.seriesNumbers(), 'no series was begun').toEqual([]);
  });

  it('on a job started without --ssi cr: no mpirun accepts', async () => {
    const { go } = holdJob(['--ssi', 'rpi', 'crtcp']);
    await job!.lines(/ready/, 2, 'both ranks ready');
    const r = await lamcheckpoint(job!.pid);
    expect(r.stderr).toMatch(
      new RegExp(
        `no mpirun with pid/job ${job!.pid} accepts checkpoint requests here \\(was it started with --ssi cr <module>\\?\\)`,
      ),
    );
    expect(r.code).toBe(1);
    await letGoAndEnd(go);
  });

  it('twice at once: both answered with a series, the job runs on correctly', async () => {
    const { go, root } = holdJob(['--ssi', 'cr', 'self', '--ssi', 'rpi', 'crtcp']);
    await job!.lines(/ready/, 2, 'both ranks ready');
    const [a, b] = await Promise.all([lamcheckpoint(job!.pid), lamcheckpoint(job!.pid)]);
    const series = [a, b].map((r) => {
      expect(r.code, r.stdout + r.stderr).toBe(0);
      return Number(/checkpoint series (\d+) of job/.exec(r.stdout)?.[1]);
    });
    // Joined (one series, both told its number) or one after the other (series 1 and 2).
    const distinct = [...new Set(series)].sort();
    expect([[1], [1, 2]]).toContainEqual(distinct);
    if (distinct.length === 1) {
      expect(a.stdout + b.stdout).toMatch(/already in progress: this request joins it/);
    }
    await letGoAndEnd(go);
    const store = await CheckpointStore.open(jobDir(root), { create: false });
    const complete = (await store.examine()).filter((s) => s.complete).map((s) => s.series);
    expect(complete.sort()).toEqual(distinct);
  });

  it('during finalize: refused clearly, the job exits 0', async () => {
    const { go, root } = holdJob(['--ssi', 'cr', 'self', '--ssi', 'rpi', 'crtcp'], 'finalize');
    await job!.lines(/rank 0: finalizing/, 1, 'rank 0 to start finalize');
    await job!.lines(/rank 1: ready/, 1, 'rank 1 to wait');
    await new Promise((r) => setTimeout(r, 300)); // rank 0's "finalizing" reaches mpirun
    const r = await lamcheckpoint(job!.pid);
    expect(r.stderr).toMatch(
      /lamcheckpoint: checkpoint refused: the job is finishing \(rank 0 started MPI.finalize\): no checkpoint can be taken any more/,
    );
    expect(r.code).toBe(1);
    await letGoAndEnd(go);
    expect(readdirSync(jobDir(root)), 'no series was begun').toEqual([]);
  });
});
