import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli } from '@ssi/cli/testing';
import { CheckpointStore } from '@ssi/mpi';
import { afterEach, expect, it } from 'vitest';
import { decodeRecord, EXTERNAL_SECTION } from '../src/record';
import {
  type Call,
  calls,
  FIXTURES,
  jobDir,
  lamcheckpoint,
  type RunningJob,
  startJob,
  testCheckpointerFlags,
  workDir,
} from './external-harness';

// The issue: "the module quiesces the messaging layer (freeze …), hands each process to the
// checkpointer, and resumes (unfreeze); after a restore it re-creates the connections (restore)",
// tested "with the generic back end and a test checkpointer … the ordering against in-flight
// messages". Three ranks keep a ring of short and large messages going; three checkpoints are
// taken in the middle of it: the test checkpointer (fixtures/checkpointer.mjs) finds every rank
// outside its own tree, with no unread byte on any socket and no byte moving for 300 ms; the
// second checkpoint marks the images restored, so every rank drops its connections and makes new
// ones; every message of the ring still arrives once, in order, every byte checked.
let job: RunningJob | undefined;
let cleanup: (() => void) | undefined;
afterEach(() => {
  job?.kill();
  cleanup?.();
  job = undefined;
  cleanup = undefined;
});

function externalJob(w: ReturnType<typeof workDir>, np: number, extra: string[] = []): RunningJob {
  return startJob([
    '-np',
    String(np),
    ...testCheckpointerFlags(w, 'restore-image --from {image} --pid {pid}'),
    ...extra,
    join(FIXTURES, 'ring.mjs'),
    w.ctl,
  ]);
}

async function checkpointOk(j: RunningJob, series: number): Promise<void> {
  const r = await lamcheckpoint(j.pid);
  expect(r.stdout + r.stderr, `lamcheckpoint, job output:\n${j.out}`).toMatch(
    new RegExp(`checkpoint series ${series} of job`),
  );
  expect(r.code).toBe(0);
}

const bySeries = (all: Call[], s: number) =>
  all.filter((c) => c.series === s).sort((a, b) => a.rank - b.rank);

it('freeze, unfreeze and restore around a ring of messages in flight, 3 ranks', async () => {
  const w = workDir();
  cleanup = w.cleanup;
  job = externalJob(w, 3);
  await job.lines(/ring running/, 3, 'the three ranks to run the ring');
  await checkpointOk(job, 1);
  writeFileSync(join(w.ctl, 'mode'), 'restore');
  await checkpointOk(job, 2);
  writeFileSync(join(w.ctl, 'mode'), 'continue');
  await checkpointOk(job, 3);
  writeFileSync(join(w.ctl, 'stop'), '');
  const end = await job.done;
  expect(end.code, job.out).toBe(0);
  expect(job.out.match(/ring OK after \d+ steps, 3 checkpoints continued/g), job.out).toHaveLength(
    3,
  );

  const all = calls(w.ctl);
  expect(all, 'one call per rank and series').toHaveLength(9);
  for (const c of all) expect(c.problems, `rank ${c.rank} series ${c.series}`).toEqual([]);
  const one = bySeries(all, 1);
  const two = bySeries(all, 2);
  const three = bySeries(all, 3);
  for (let r = 0; r < 3; r++) {
    // Each rank has its two ring connections (and may have more to peers it never used).
    expect(one[r]!.sockets.length, `rank ${r}'s sockets`).toBeGreaterThanOrEqual(2);
    // Unfreeze keeps the connections; restore made new ones (other local ports).
    expect(two[r]!.sockets, `rank ${r}: unfreeze keeps the connections`).toEqual(one[r]!.sockets);
    for (const s of three[r]!.sockets) {
      expect(two[r]!.sockets, `rank ${r}: restore re-created the connections`).not.toContain(s);
    }
  }

  // Each series is complete; each rank's file records its image and its restart command.
  const dir = jobDir(w.root);
  const store = await CheckpointStore.open(dir, { create: false });
  for (let r = 0; r < 3; r++) {
    const file = await store.readRankFile(3, r);
    const rec = decodeRecord(file.sections.get(EXTERNAL_SECTION)!, `rank ${r}`);
    expect(rec.backend).toBe('generic');
    expect(rec.place.pid).toBe(three[r]!.pid);
    expect(rec.restart).toBe(`restore-image --from ${rec.place.image} --pid ${rec.place.pid}`);
    expect(existsSync(join(rec.place.image, 'image.txt'))).toBe(true);
  }
  expect(existsSync(join(dir, 'series-3', 'MANIFEST.json'))).toBe(true);

  // lamrestart runs each rank's restart command (not the program): this one does not exist, and
  // the restart fails naming the rank, the command and its status.
  const again = await runCli('lamrestart', [dir], process.env, { timeoutMs: 60_000 });
  const text = again.stdout + again.stderr;
  expect(again.code, text).not.toBe(0);
  expect(text).toMatch(
    /rank \d: the restart command exited with status 127: restore-image --from \S+external-\d\/image --pid \d+/,
  );
});

it('a checkpoint command that fails: the series is given up with its exit status and stderr, the job goes on', async () => {
  const w = workDir();
  cleanup = w.cleanup;
  job = externalJob(w, 2);
  await job.lines(/ring running/, 2, 'the two ranks to run the ring');
  writeFileSync(join(w.ctl, 'mode'), 'fail');
  const r = await lamcheckpoint(job.pid);
  const text = r.stdout + r.stderr;
  expect(r.code, text).not.toBe(0);
  expect(text).toMatch(/series 1 is incomplete/);
  expect(text).toMatch(/exited with status 3/);
  expect(text).toMatch(/no space left for the image/);
  writeFileSync(join(w.ctl, 'mode'), 'continue');
  await checkpointOk(job, 2);
  writeFileSync(join(w.ctl, 'stop'), '');
  const end = await job.done;
  expect(end.code, job.out).toBe(0);
  expect(job.out.match(/ring OK after \d+ steps, 2 checkpoints continued/g), job.out).toHaveLength(
    2,
  );
});
