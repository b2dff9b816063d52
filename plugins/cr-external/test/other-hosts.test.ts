import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bootTestbedUniverse, type TestbedUniverse } from '@ssi/cli/testing';
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

afterEach(() => {
  job?.kill();
  job = undefined;
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
  },
);
