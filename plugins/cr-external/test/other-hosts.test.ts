import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '@ssi/cli/testing';
import { lamBin, wipeSession } from '@ssi/lam';
import { CheckpointStore } from '@ssi/mpi';
import { startTestbed, type Testbed, testbedAvailable } from '@ssi/testbed';
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
const SUFFIX = `cr-external-${process.pid}`;
const work = mkdtempSync(join(tmpdir(), 'ssi-cr-external-hosts-'));
const ckpt = join(work, 'ckpt');
let tb: Testbed;
let job: RunningJob | undefined;

function env(): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/',
    TMPDIR: process.env.TMPDIR ?? tmpdir(),
    LAM_MPI_SESSION_HOST: tb.hosts[0]!.address,
    LAM_MPI_SESSION_SUFFIX: SUFFIX,
    LAM_MPI_SSI_boot_rsh_agent: tb.sshCommand.join(' '),
    LAM_MPI_SSI_boot_base_timeout: '20',
  };
}

beforeAll(async () => {
  if (!available.ok) return;
  const prefix = join(work, 'prefix');
  mkdirSync(join(prefix, 'bin'), { recursive: true });
  symlinkSync(lamBin('hboot'), join(prefix, 'bin', 'hboot'));
  tb = await startTestbed({ hosts: 3 });
  const schema = tb.writeBootSchema(join(work, 'hosts'), { perHost: () => `prefix=${prefix}` });
  const boot = await runCli('lamboot', [schema], env(), { cwd: work, timeoutMs: 120_000 });
  if (boot.code !== 0) throw new Error(`lamboot failed:\n${boot.stdout}\n${boot.stderr}`);
});

afterEach(() => {
  job?.kill();
  job = undefined;
});

afterAll(async () => {
  if (tb) {
    await runCli('lamhalt', [], env(), { cwd: work, timeoutMs: 60_000 }).catch(() => {});
    for (const h of tb.hosts) await wipeSession(h.address, SUFFIX, 2000);
    await tb.stop();
  }
  rmSync(work, { recursive: true, force: true });
});

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
          ckpt,
          '--ssi',
          'crmpi_external_checkpoint_cmd',
          testCheckpointer(work),
          join(FIXTURES, 'ring.mjs'),
          work,
        ],
        env(),
      );
      await job.lines(/ring running/, 3, 'the three ranks to run the ring');
      let r = await lamcheckpoint(job.pid);
      expect(r.stdout + r.stderr, job.out).toMatch(/checkpoint series 1 of job/);
      writeFileSync(join(work, 'mode'), 'restore');
      r = await lamcheckpoint(job.pid);
      expect(r.stdout + r.stderr, job.out).toMatch(/checkpoint series 2 of job/);
      writeFileSync(join(work, 'mode'), 'continue');
      r = await lamcheckpoint(job.pid);
      expect(r.stdout + r.stderr, job.out).toMatch(/checkpoint series 3 of job/);
      writeFileSync(join(work, 'stop'), '');
      const end = await job.done;
      expect(end.code, job.out).toBe(0);
      expect(job.out.match(/ring OK after \d+ steps, 3 checkpoints continued/g)).toHaveLength(3);

      const all = calls(work);
      expect(all).toHaveLength(9);
      for (const c of all) expect(c.problems, `rank ${c.rank} series ${c.series}`).toEqual([]);
      const store = await CheckpointStore.open(jobDir(ckpt), { create: false });
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
