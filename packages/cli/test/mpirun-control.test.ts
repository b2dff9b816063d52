import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { HubControl } from '@ssi/mpi';
import { jobsProgram, killAllJobs, launchJob } from '@ssi/mpi/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { createCliContext } from '../src/cli-context';
import { runJob } from '../src/mpirun/job';
import { placeJob } from '../src/mpirun/placement';
import { type JobUniverse, openUniverse } from '../src/mpirun/universe';

/**
 * The job control channel with real processes: mpirun's `runJob` runs in this test process on a
 * private one-node universe it boots (its own session suffix: nothing of another job is touched)
 * and starts 3 real ranks of fixtures/control-rank.ts through the lamd; the test plays the
 * mpirun-side code (a crlam module would) through the `control` hook.
 */
const program = resolve(import.meta.dirname, 'fixtures', 'control-rank.ts');
const NP = 3;
let universe: JobUniverse | undefined;

afterAll(async () => {
  killAllJobs();
  const sessionDir = universe?.client.sessionDir;
  await universe?.release();
  // The private universe and its session directory are gone (only ours is looked at).
  if (sessionDir) expect(existsSync(sessionDir), sessionDir).toBe(false);
});

/** Runs the job, capturing what runJob forwards to this process's stdout / stderr. */
async function runControlJob(control: (c: HubControl) => void, timeoutMs = 90_000) {
  process.env.LAM_MPI_SESSION_SUFFIX = `control-test-${process.pid}`; // never someone else's universe
  const says: string[] = [];
  const ctx = createCliContext([], 0);
  universe = await openUniverse(ctx, (l) => says.push(l), { verbose: false });
  const placements = placeJob(
    [{ where: [], exports: [], argv: [program], np: NP }],
    await universe.client.universe(),
  );
  let stdout = '';
  let stderr = '';
  const realOut = process.stdout.write.bind(process.stdout);
  const realErr = process.stderr.write.bind(process.stderr);
  process.stdout.write = ((s: string | Uint8Array) => {
    stdout += String(s);
    return true;
  }) as typeof process.stdout.write;
  process.stderr.write = ((s: string | Uint8Array) => {
    stderr += String(s);
    return true;
  }) as typeof process.stderr.write;
  let timer: NodeJS.Timeout | undefined;
  try {
    const job = runJob(universe.client, placements, {
      ssiEnv: { LAM_MPI_SSI_rpi: 'tcp' },
      noWait: false,
      prefix: true,
      verbose: false,
      say: (l) => says.push(l),
      control: (c) => control(c),
    });
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        // Halting the universe kills the ranks; runJob then ends on its own.
        void universe?.release();
        universe = undefined;
        reject(new Error(`timed out after ${timeoutMs} ms waiting for the ${NP}-rank job to end`));
      }, timeoutMs);
    });
    const code = await Promise.race([job, timeout]);
    return { code, stdout, stderr, says };
  } finally {
    clearTimeout(timer);
    process.stdout.write = realOut;
    process.stderr.write = realErr;
  }
}

describe('job control channel between mpirun and the ranks', () => {
  it('carries typed messages both ways, in order, with answers, and refuses what is bad', async () => {
    const seq: number[][] = Array.from({ length: NP }, () => []);
    const r = await runControlJob((c) => {
      // Sent before any rank runs: kept for each rank until it starts, then until its handler.
      for (let i = 0; i < 30; i++) c.send('all', 'test.order', i);
      c.send(1, 'test.unhandled', 'nobody listens');
      c.on('test.seq', (rank, i) => void seq[rank]!.push(i as number));
      c.on('test.square', (_rank, x) => (x as number) ** 2);
      c.on('test.fail', () => {
        throw new Error('deliberately broken handler');
      });
      c.on('test.finished', () => 'ok');
    });
    const out = `${r.stdout}\n${r.stderr}\n${r.says.join('\n')}`;
    expect(r.code, out).toBe(0);
    const order = Array.from({ length: 30 }, (_, i) => i).join(',');
    const count = Array.from({ length: 50 }, (_, i) => i);
    for (let k = 0; k < NP; k++) {
      expect(r.stdout, out).toContain(`[${k}] square ${(k + 3) ** 2}`);
      expect(r.stdout).toContain(`[${k}] order ${order}`);
      expect(seq[k]).toEqual(count);
      expect(r.stdout).toContain(
        `[${k}] test.nobody refused: control.ask("test.nobody"): mpirun has no handler for "test.nobody"`,
      );
      expect(r.stdout).toContain(
        `[${k}] test.fail refused: control.ask("test.fail"): mpirun's handler failed: deliberately broken handler`,
      );
    }
    // Unknown type at a rank: reported by that rank, nothing crashes.
    expect(r.stderr).toContain(
      '[1] rank 1: control: 1 control message(s) "test.unhandled" from mpirun had no handler',
    );
    // At mpirun: the unknown type, the malformed messages, the sender that is not a rank.
    const warnings = r.says.filter((l) => l.startsWith('mpirun: warning: ignored a message: '));
    const text = warnings.join('\n');
    expect(text).toContain('sent control message "test.nobody", which has no handler here');
    expect(text).toContain('control message garbage is not an object');
    expect(text).toContain('control message from rank 0: type 42 is not a string');
    expect(text).toMatch(/control message "test.square" for rank 0 from n0:\d+, not that rank/);
    // The intruder's ask got no answer: 9 squared went nowhere.
    expect(r.stdout).not.toContain('square 81');
  });
});

describe('the same channel under the test launcher of @ssi/mpi/testing', () => {
  it('answers asks and delivers messages sent before the ranks started, in order', async () => {
    const r = await launchJob({
      np: 2,
      program: jobsProgram,
      args: ['control'],
      ssi: { rpi: 'tcp' },
      cwd: resolve(import.meta.dirname, 'fixtures'),
      timeoutMs: 60_000,
      control: (c) => {
        for (let i = 0; i < 5; i++) c.send('all', 'job.note', i);
        c.on('job.echo', (rank, p) => ({ rank, echoed: p }));
      },
    });
    expect(r.ok, `${r.failure}\n${r.output}`).toBe(true);
    expect(r.controlWarnings).toEqual([]);
    for (let k = 0; k < 2; k++) {
      expect(r.stdout[k]).toContain(
        `control ${k} answer {"rank":${k},"echoed":${k}} notes 0,1,2,3,4`,
      );
    }
  });
});
