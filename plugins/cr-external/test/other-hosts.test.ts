import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bootTestbedUniverse, runCli, type TestbedUniverse, waitFor } from '@ssi/cli/testing';
import { CheckpointStore } from '@ssi/mpi';
import { testbedAvailable } from '@ssi/testbed';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { decodeRecord, EXTERNAL_SECTION } from '../src/record';
import {
  calls,
  FIXTURES,
  jobDir,
  lamcheckpoint,
  type RunningJob,
  startJob,
  testCheckpointer,
} from './external-harness';
import {
  alive,
  heldRing,
  killKept,
  PAUSE_MS,
  RING,
  restoreRecords,
  results,
  STEPS,
} from './held-ring';

// The issue: the protocol tested "with real processes and messages in flight during the
// checkpoint, several ranks, also across the test hosts". A universe of three test hosts (one
// sshd per loopback address); one rank per node runs the ring; a checkpoint that unfreezes and
// one that restores, each rank's checkpointer run on its own node.
const available = testbedAvailable();
/** The job's checkpoint root (in the universe's work directory). */
const ckpt = () => join(u.work, 'ckpt');
/** The universe booted over the test hosts (in beforeAll, when they can be had). */
let u: TestbedUniverse;
let job: RunningJob | undefined;

beforeAll(async () => {
  if (available.ok) u = await bootTestbedUniverse({ hosts: 3, name: 'cr-external' });
});

let kept = '';
afterEach(() => {
  job?.kill();
  job = undefined;
  killKept(kept);
});

afterAll(() => u?.halt());

describe.skipIf(!available.ok)(
  `external checkpoints across test hosts (${available.ok ? 'real sshd' : available.reason})`,
  () => {
    it('n0-2, one rank per node: unfreeze, then restore with new connections, the ring intact', async () => {
      job = startJob(
        [
          'n0-2',
          '--ssi',
          'cr',
          'external',
          '--ssi',
          'rpi',
          'crtcp',
          '--ssi',
          'crlam_external_dir',
          ckpt(),
          '--ssi',
          'crmpi_external_checkpoint_cmd',
          testCheckpointer(u.work),
          join(FIXTURES, 'ring.mjs'),
          u.work,
        ],
        u.env(),
      );
      await job.lines(/ring running/, 3, 'the three ranks to run the ring');
      let r = await lamcheckpoint(job.pid);
      expect(r.stdout + r.stderr, job.out).toMatch(/checkpoint series 1 of job/);
      writeFileSync(join(u.work, 'mode'), 'restore');
      r = await lamcheckpoint(job.pid);
      expect(r.stdout + r.stderr, job.out).toMatch(/checkpoint series 2 of job/);
      writeFileSync(join(u.work, 'mode'), 'continue');
      r = await lamcheckpoint(job.pid);
      expect(r.stdout + r.stderr, job.out).toMatch(/checkpoint series 3 of job/);
      writeFileSync(join(u.work, 'stop'), '');
      const end = await job.done;
      expect(end.code, job.out).toBe(0);
      expect(job.out.match(/ring OK after \d+ steps, 3 checkpoints continued/g)).toHaveLength(3);

      const all = calls(u.work);
      expect(all).toHaveLength(9);
      for (const c of all) expect(c.problems, `rank ${c.rank} series ${c.series}`).toEqual([]);
      const store = await CheckpointStore.open(jobDir(ckpt()), { create: false });
      for (let rank = 0; rank < 3; rank++) {
        const rec = decodeRecord(
          (await store.readRankFile(3, rank)).sections.get(EXTERNAL_SECTION)!,
          `rank ${rank}`,
        );
        expect(rec.place.node, `rank ${rank} ran its checkpointer on its own node`).toBe(
          `n${rank}`,
        );
        const mine = all.filter((c) => c.rank === rank).sort((a, b) => a.series - b.series);
        // Each rank's peers are on the other hosts: its sockets go to their addresses.
        for (const s of mine[0]!.sockets) expect(s.split('>')[0]).toMatch(/^127\./);
        expect(mine[1]!.sockets).toEqual(mine[0]!.sockets);
        for (const s of mine[2]!.sockets) expect(mine[1]!.sockets).not.toContain(s);
      }
    });

    it('a series of process images restored on other nodes: every rank moves, the ring ends as undisturbed', async () => {
      const w = { root: join(u.work, 'moved'), ctl: join(u.work, 'moved-ctl') };
      mkdirSync(w.ctl, { recursive: true });
      kept = w.ctl;
      job = startJob(['n0-2', '--ssi', 'rpi', 'crtcp', RING, w.ctl, STEPS, PAUSE_MS], u.env());
      const reference = await job.done;
      expect(reference.code, job.out).toBe(0);
      const undisturbed = results(job.out);
      expect(undisturbed, job.out).toHaveLength(3);

      const { dir, pids } = await heldRing(
        w,
        (j) => {
          job = j;
        },
        { where: ['n0-2'], env: u.env() },
      );
      // Placed on n1 and n2 round-robin: rank 0 n0 → n1, rank 1 n1 → n2, rank 2 n2 → n1.
      const r = await runCli('lamrestart', [dir, 'n1-2'], u.env(), { timeoutMs: 120_000 });
      const out = r.stdout + r.stderr;
      expect(r.code, out).toBe(0);
      expect(results(out), out).toEqual(undisturbed);
      for (const pid of pids) {
        await waitFor(`kept process ${pid} to end`, () => !alive(pid), 10_000);
      }
      for (let rank = 0; rank < 3; rank++) {
        expect(restoreRecords(dir, rank).attached, `rank ${rank}`).toBe(pids[rank]);
      }
    });
  },
);
