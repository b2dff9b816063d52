import { join } from 'node:path';
import { bootTestbedUniverse, type TestbedUniverse } from '@ssi/cli/testing';
import { testbedAvailable } from '@ssi/testbed';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES, jobDir, lamcheckpoint, type RunningJob, startJob } from './cr-harness';

// The issue: "restart on other test hosts" / "the nodes may differ from the original job's".
// A universe of four test hosts (one sshd per loopback address) booted with lamboot; the job
// runs on nodes n0 and n1, is checkpointed and ends; lamrestart puts it on n2 and n3, and the
// ranks report the other hosts while checking every byte.
const available = testbedAvailable();
/** The job's checkpoint root (in the universe's work directory). */
const ckpt = () => join(u.work, 'ckpt');
/** The universe booted over the test hosts (in beforeAll, when they can be had). */
let u: TestbedUniverse;
let job: RunningJob | undefined;

beforeAll(async () => {
  if (available.ok) u = await bootTestbedUniverse({ hosts: 4, name: 'cr-hosts' });
});

afterEach(() => {
  job?.kill();
  job = undefined;
});

afterAll(() => u?.halt());

describe.skipIf(!available.ok)(
  `restart on other test hosts (${available.ok ? 'real sshd' : available.reason})`,
  () => {
    it('checkpointed on n0,n1, restarted on n2,n3: other processor names, every byte checked', async () => {
      const [a, b, c, d] = u.testbed.hosts.map((h) => h.address);
      job = startJob(
        [
          'n0-1',
          '--ssi',
          'cr',
          'self',
          '--ssi',
          'rpi',
          'crtcp',
          '--ssi',
          'crlam_self_dir',
          ckpt(),
          join(FIXTURES, 'migrate.mjs'),
        ],
        u.env(),
      );
      await job.lines(/waiting for the checkpoint/, 2, 'both ranks to wait for the checkpoint');
      expect(job.out).toContain(`rank 0: on ${a},`);
      expect(job.out).toContain(`rank 1: on ${b},`);
      const r = await lamcheckpoint(job.pid);
      expect(r.stdout + r.stderr).toMatch(/checkpoint series 1 of job/);
      expect(r.code).toBe(0);
      const first = await job.done;
      expect(first.code, job.out).toBe(0);
      expect(job.out).toContain(`rank 0: migrate OK (continued) now on ${a}, first on ${a}`);

      const restarted = await u.run('lamrestart', [jobDir(ckpt()), 'n2-3']);
      const text = restarted.stdout + restarted.stderr;
      expect(restarted.code, text).toBe(0);
      expect(text).toContain(`rank 0: migrate OK (restarted) now on ${c}, first on ${a}`);
      expect(text).toContain(`rank 1: migrate OK (restarted) now on ${d}, first on ${b}`);
    });
  },
);
