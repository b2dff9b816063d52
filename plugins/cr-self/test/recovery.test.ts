import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { bootTestbedUniverse, type TestbedUniverse } from '@ssi/cli/testing';
import { LamClient } from '@ssi/lam';
import { testbedAvailable } from '@ssi/testbed';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES, type RunningJob, startJob } from './cr-harness';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// The issue (#17, automatic recovery): a checkpointable heat run with periodic checkpoints on
// test hosts (one sshd per loopback address, booted with lamboot) loses a rank (SIGKILL), then
// a whole host (its lamd and its processes); mpirun --ssi crlam_base_recover 2 ends what is left,
// restarts from the latest complete series and the job ends with the undisturbed run's result,
// reporting the time lost; nothing of the job is left running on any host. A failure before the
// first checkpoint, a rank's own non-zero exit and an abort are not recovered.
const available = testbedAvailable();
const HEAT = join(FIXTURES, 'heat-cr.mjs');
/** 64x64 plate, 300 sweeps, 20 ms between sweeps: several seconds, a series every second. */
const HEAT_ARGS = ['64', '300', '20'];
/** The universe booted over the test hosts (in beforeAll, when they can be had). */
let u: TestbedUniverse;
let job: RunningJob | undefined;
let reference = '';
let run = 0;

/** mpirun -v on n0-2 (ranks 0..3 on n0, n1, n2, n0) of the heat fixture, with its own series. */
function heat(opts: { recover?: number; interval?: number; spares?: string; fail?: string }) {
  const ckpt = join(u.work, `ckpt-${++run}`);
  const args = ['-v', 'n0-2', '-np', '4', '--ssi', 'cr', 'self', '--ssi', 'rpi', 'crtcp'];
  args.push('--ssi', 'crlam_self_dir', ckpt);
  args.push('--ssi', 'crlam_self_interval', String(opts.interval ?? 1));
  if (opts.recover !== undefined) args.push('--ssi', 'crlam_base_recover', String(opts.recover));
  if (opts.spares) args.push('--ssi', 'crlam_base_recover_nodes', opts.spares);
  args.push(HEAT, ...HEAT_ARGS, ...(opts.fail ? [opts.fail] : []));
  job = startJob(args, u.env(), 180_000);
  return job;
}

/** The pid of each rank on `node` as `mpirun -v` last reported it. */
function rankPids(j: RunningJob, node: number): number[] {
  const last = new Map<number, number>();
  for (const m of j.out.matchAll(/mpirun: rank (\d+) is pid (\d+) on n(\d+)/g)) {
    if (Number(m[3]) === node) last.set(Number(m[1]), Number(m[2]));
  }
  return [...last.values()];
}

/** Processes of this test's universe still running the heat fixture, on any test host. */
function heatLeft(): string[] {
  const left: string[] = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (!args.includes(HEAT)) continue;
      const environ = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
      if (environ.includes(`LAM_MPI_SESSION_SUFFIX=${u.suffix}`)) left.push(`${pid}: ${args}`);
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return left;
}

/** The recovery report, printed for the record (lost and restart times on this machine). */
const report = (out: string) =>
  console.log(
    out
      .split('\n')
      .filter((l) => /recover|lost time/.test(l))
      .join('\n'),
  );

const resultOf = (out: string) => /heat result: .*/.exec(out)?.[0] ?? `no result in:\n${out}`;

beforeAll(async () => {
  if (available.ok) u = await bootTestbedUniverse({ hosts: 4, name: 'cr-recover' });
});

afterEach(() => {
  job?.kill();
  job = undefined;
});

afterAll(() => u?.halt());

describe.skipIf(!available.ok)(
  `automatic recovery on test hosts (${available.ok ? 'real sshd' : available.reason})`,
  () => {
    it('an undisturbed run: the reference result; series do not grow from one to the next', async () => {
      const j = heat({});
      const r = await j.done;
      expect(r.code, j.out).toBe(0);
      reference = resultOf(j.out);
      expect(reference).toMatch(/^heat result: 64x64 plate, 300 sweeps/);
      // Each series holds the same plate: a rollback log that is never emptied grows it.
      const sizes = [...j.out.matchAll(/checkpoint series \d+ \((\d+) bytes/g)].map((m) =>
        Number(m[1]),
      );
      expect(sizes.length, j.out).toBeGreaterThanOrEqual(2);
      expect(Math.max(...sizes), j.out).toBeLessThan(sizes[0]! * 1.5);
    });

    it('SIGKILL of a rank: restarted from the latest series, same result, lost time reported', async () => {
      const j = heat({ recover: 2 });
      await j.lines(/mpirun: checkpoint series 2 \(/, 1, 'the second periodic checkpoint');
      await sleep(500); // some work after the checkpoint, lost by the failure
      const [pid] = rankPids(j, 1);
      expect(pid, j.out).toBeDefined();
      process.kill(pid!, 'SIGKILL');
      const r = await j.done;
      report(j.out);
      expect(r.code, j.out).toBe(0);
      expect(resultOf(j.out)).toBe(reference);
      expect(j.out).toMatch(/rank 1 \(pid \d+ on n1\) was killed by SIGKILL/);
      expect(j.out).toMatch(
        /mpirun: recovery 1 of 2: restarting the job from series \d+ .*lost time: \d+\.\d s of work since that checkpoint/,
      );
      expect(j.out).toMatch(
        /mpirun: recovery 1: every rank runs again from series \d+ on n0,n1,n2; the restart took \d+\.\d s/,
      );
      expect(j.out).toMatch(
        /mpirun: the job was recovered 1 time\(s\); lost time in all: \d+\.\d s/,
      );
      expect(j.out).toMatch(/rank \d: restarted at sweep [1-9]\d*/);
      expect(heatLeft()).toEqual([]);
    });

    it('a rank killed before the first complete checkpoint: not recovered, fails as before', async () => {
      const j = heat({ recover: 2, interval: 0 });
      await j.lines(/mpirun: rank 1 is pid/, 1, 'rank 1 to start');
      process.kill(rankPids(j, 1)[0]!, 'SIGKILL');
      const r = await j.done;
      expect(r.code, j.out).toBe(137);
      expect(j.out).toContain(
        'mpirun: not recovered: the job failed before its first complete checkpoint',
      );
      expect(j.out).not.toMatch(/recovery 1/);
      expect(heatLeft()).toEqual([]);
    });

    it.each([
      ['exit', 3, 'rank 1 ended with an error of its own'],
      ['abort', 4, 'rank 1 aborted the job'],
    ])(
      'a rank that fails by itself (%s) after a checkpoint: not recovered',
      async (fail, code, why) => {
        const j = heat({ recover: 2, fail });
        const r = await j.done;
        expect(j.out).toMatch(/checkpoint series 1 \(/);
        expect(j.out).toContain(`rank 1: failing by itself (${fail})`);
        expect(r.code, j.out).toBe(code);
        expect(j.out).toContain(`mpirun: not recovered: ${why}`);
        expect(j.out).not.toMatch(/recovery 1/);
        expect(heatLeft()).toEqual([]);
      },
    );

    it('a whole host lost (its lamd and its ranks killed): its ranks go to the spare n3, same result', async () => {
      const j = heat({ recover: 2, spares: 'n3' });
      await j.lines(/mpirun: checkpoint series 2 \(/, 1, 'the second periodic checkpoint');
      const client = await LamClient.connect({ env: u.env() });
      const lamd = (await client.universe()).find((n) => n.id === 2)!.pid;
      client.close();
      const ranks = rankPids(j, 2);
      expect(ranks.length, j.out).toBe(1);
      for (const pid of [lamd, ...ranks]) process.kill(pid, 'SIGKILL');
      const r = await j.done;
      report(j.out);
      expect(r.code, j.out).toBe(0);
      expect(resultOf(j.out)).toBe(reference);
      expect(j.out).toMatch(/rank 2 \(pid \d+ on n2\)/);
      expect(j.out).toMatch(
        /mpirun: recovery 1 of 2: restarting the job from series \d+ .*lost time: /,
      );
      expect(j.out).toMatch(/mpirun: rank 2 is pid \d+ on n3/);
      expect(j.out).toMatch(/every rank runs again from series \d+ on n0,n1,n3; the restart took/);
      expect(heatLeft()).toEqual([]);
    });
  },
);
