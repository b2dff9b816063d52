import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { explainJob, killAllJobs, launchJob } from '@ssi/mpi/testing';
import { cleanStaleSegments, sessionPrefix } from '@ssi/shm';
import { afterEach, describe, expect, it } from 'vitest';

afterEach(() => killAllJobs());

const fixture = (name: string) => new URL(`./fixtures/${name}`, import.meta.url).pathname;

/**
 * Per rank, the body counts `rpi_verbose 10` printed at finalize: [rank, through the pool straight
 * into the buffer, read from the sender, taken from ours, shared with the sender, tails written].
 */
function bodyCounts(output: string): (string | number)[][] {
  const re =
    /rank (\d) .*straight into the receive buffer (\d+), read from the sender's memory (\d+), taken from ours (\d+); copies shared with the sender (\d+), tails written into the receiver's (\d+)/g;
  return [...output.matchAll(re)].map((m) => [m[1]!, ...m.slice(2, 7).map(Number)]).sort();
}

describe('sm rpi: 0 B and 16 MiB messages', () => {
  it('16 MiB posted, unexpected and bufferless, 0 B both ways; each body copied once, by both processes', async () => {
    const r = await launchJob({
      np: 2,
      program: fixture('large-messages.mjs'),
      ssi: { rpi: 'sm', rpi_verbose: 10 },
      timeoutMs: 120_000,
    });
    expect(r.ok, explainJob(r)).toBe(true);
    expect(r.output).toContain('rank 0 large messages ok');
    expect(r.output).toContain('rank 1 large messages ok');
    expect(r.output).toContain('long messages in a single copy (process_vm_readv/writev)');
    // rank 1 received three 16 MiB bodies (into the posted buffer, the unexpected one's, the
    // bufferless one's): none via the pool; rank 1 read the head of each out of rank 0's memory
    // while rank 0 wrote the tail into rank 1's buffer
    expect(bodyCounts(r.output)).toEqual([
      ['0', 0, 0, 3, 0, 3],
      ['1', 0, 3, 0, 3, 0],
    ]);
  });

  it('with rpi_sm_split 0 the receiver reads each whole body out of the sender alone', async () => {
    const r = await launchJob({
      np: 2,
      program: fixture('large-messages.mjs'),
      ssi: { rpi: 'sm', rpi_verbose: 10, rpi_sm_split: 0 },
      timeoutMs: 120_000,
    });
    expect(r.ok, explainJob(r)).toBe(true);
    expect(r.output).toContain('rank 1 large messages ok');
    expect(bodyCounts(r.output)).toEqual([
      ['0', 0, 0, 3, 0, 0],
      ['1', 0, 3, 0, 0, 0],
    ]);
  });

  it('with rpi_sm_single_copy 0 the bodies come through the pool, copied once into the receive buffers', async () => {
    const r = await launchJob({
      np: 2,
      program: fixture('large-messages.mjs'),
      ssi: { rpi: 'sm', rpi_verbose: 10, rpi_sm_single_copy: 0 },
      timeoutMs: 120_000,
    });
    expect(r.ok, explainJob(r)).toBe(true);
    expect(r.output).toContain('rank 1 large messages ok');
    expect(r.output).toContain('long messages through the pool: rpi_sm_single_copy is 0');
    // each cleared before it came: all straight from the pool into the receive buffer
    expect(bodyCounts(r.output)).toEqual([
      ['0', 0, 0, 0, 0, 0],
      ['1', 3, 0, 0, 0, 0],
    ]);
  });
});

describe('sm rpi: the copy parameters', () => {
  it.each([
    [{ rpi_sm_single_copy: 2 }, 'rpi_sm_single_copy must be 0 or 1, got 2'],
    [
      { rpi_sm_split: -1 },
      'rpi_sm_split must be a whole number of bytes >= 0 (0: never split), got -1',
    ],
  ])('a bad value (%o) fails MPI.init naming the parameter', async (ssi, message) => {
    const r = await launchJob({
      np: 2,
      program: fixture('large-messages.mjs'),
      ssi: { rpi: 'sm', ...ssi },
      timeoutMs: 60_000,
    });
    expect(r.ok).toBe(false);
    expect(r.output).toContain(message);
  });
});

/** The job's segments are this test's own: named after a session directory made for it. */
function ownSegments(prefix: string): string[] {
  return readdirSync('/dev/shm').filter((n) => n.startsWith(prefix));
}

describe('sm rpi: clean-up of the node segment', () => {
  it('the name is gone once every rank attached, and a SIGKILLed job leaves nothing', async () => {
    const session = mkdtempSync(join(tmpdir(), 'ssi-sm-life-'));
    const prefix = sessionPrefix({ sessionDir: session });
    try {
      const r = await launchJob({
        np: 3,
        program: fixture('segment-life.mjs'),
        args: [prefix, '0'],
        env: { LAM_MPI_SESSION_DIR: session },
        ssi: { rpi: 'sm', rpi_verbose: 10 },
        timeoutMs: 60_000,
      });
      expect(r.ok).toBe(false); // rank 0, the segment's creator, died by SIGKILL
      expect(r.failure).toMatch(/rank 0/);
      // the segment was created under this session's prefix, and unlinked as soon as all 3 attached
      expect(r.output).toMatch(new RegExp(`segment /${prefix}`));
      for (const rank of [0, 1, 2]) expect(r.output).toContain(`rank ${rank} sees 0 segments`);
      expect(ownSegments(prefix)).toEqual([]);
    } finally {
      // whatever a failed run left under this test's own session (never another run's)
      cleanStaleSegments({ sessionDir: session, force: true });
      rmSync(session, { recursive: true, force: true });
    }
  });

  it('a segment a job left when killed during MPI.init is removed by the next job', async () => {
    const session = mkdtempSync(join(tmpdir(), 'ssi-sm-stale-'));
    const prefix = sessionPrefix({ sessionDir: session });
    try {
      const dead = spawnSync(process.execPath, [fixture('stale-segment.mjs'), session, 'deadjob'], {
        encoding: 'utf8',
        timeout: 30_000,
      });
      expect(dead.signal, dead.stderr).toBe('SIGKILL');
      const left = ownSegments(prefix);
      expect(left).toHaveLength(1);
      expect(left[0]).toContain('-deadjob-sm');
      const r = await launchJob({
        np: 2,
        program: fixture('segment-life.mjs'),
        args: [prefix],
        env: { LAM_MPI_SESSION_DIR: session },
        ssi: { rpi: 'sm' },
        timeoutMs: 60_000,
      });
      expect(r.ok, explainJob(r)).toBe(true);
      expect(ownSegments(prefix)).toEqual([]);
      expect(existsSync(join('/dev/shm', left[0]!))).toBe(false);
    } finally {
      // whatever a failed run left under this test's own session (never another run's)
      cleanStaleSegments({ sessionDir: session, force: true });
      rmSync(session, { recursive: true, force: true });
    }
  });
});
