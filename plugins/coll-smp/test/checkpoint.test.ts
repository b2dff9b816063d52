import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { bootTestbedUniverse, type TestbedUniverse } from '@ssi/cli/testing';
import { testbedAvailable } from '@ssi/testbed';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * A job whose communicators use smp stays checkpointable (`--ssi cr self --ssi rpi crtcp`): two
 * test hosts (one sshd per loopback address) with 2 CPUs each, `mpirun C` (2+2 ranks), a
 * checkpoint taken while three ranks are blocked in smp's collectives, then `lamrestart` from
 * the series: collectives checked before, after the checkpoint and after the restart.
 */
const available = testbedAvailable();
const program = join(import.meta.dirname, 'fixtures', 'smp-checkpoint.mjs');
/** The universe booted over the test hosts (in beforeAll, when they can be had). */
let u: TestbedUniverse;

beforeAll(async () => {
  if (available.ok)
    u = await bootTestbedUniverse({ hosts: 2, name: 'smp-cr', perHost: () => 'cpu=2' });
});

afterAll(() => u?.halt());

describe.skipIf(!available.ok)(
  `smp with cr self and crtcp on two test hosts (${available.ok ? 'real sshd' : available.reason})`,
  () => {
    it('checkpoints during smp collectives, continues, and restarts from the series', async () => {
      const root = join(u.work, 'checkpoints');
      mkdirSync(root);
      const ssi = ['--ssi', 'cr', 'self', '--ssi', 'rpi', 'crtcp', '--ssi', 'coll', 'smp'];
      const first = await u.run(
        'mpirun',
        ['C', ...ssi, '--ssi', 'coll_verbose', '10', '--ssi', 'crlam_self_dir', root, program],
        { timeoutMs: 180_000 },
      );
      const out = `${first.stdout}\n${first.stderr}`;
      expect(first.code, out).toBe(0);
      expect(out.match(/OK rank \d\n/g), out).toHaveLength(4);
      expect(out).toMatch(/CHECKPOINT series 1/);
      expect(out, 'smp serves the world').toMatch(/COMM_WORLD: coll module smp/);

      const jobs = readdirSync(root);
      expect(jobs, 'one job directory').toHaveLength(1);
      const again = await u.run('lamrestart', [join(root, jobs[0]!)], { timeoutMs: 180_000 });
      const text = `${again.stdout}\n${again.stderr}`;
      expect(again.code, text).toBe(0);
      expect(text.match(/OK rank \d \(restarted\)/g), text).toHaveLength(4);
    });
  },
);
