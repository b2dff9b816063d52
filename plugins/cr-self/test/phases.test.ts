import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkpointRoot, FIXTURES, type RunningJob, startJob } from './cr-harness';

// The outcome of a checkpoint says where its time went (`phases`): the application's
// `mpi.cr.checkpoint()` gets it, as `lamcheckpoint -v` and `tools/bench cr` do.
let job: RunningJob | undefined;
let cleanup: (() => void) | undefined;
afterEach(() => {
  job?.kill();
  cleanup?.();
  job = undefined;
  cleanup = undefined;
});

const PHASES = ['prepareMs', 'savedMs', 'drainMs', 'saveMs', 'drainSaveMs', 'commitMs'];

describe('the phases of a checkpoint', () => {
  it('3 ranks: prepare, drain+save and commit add up to no more than the whole', async () => {
    const ck = checkpointRoot();
    cleanup = ck.cleanup;
    const env = { ...process.env, LAM_MPI_SESSION_SUFFIX: `cr-phases-${process.pid}` };
    job = startJob(
      ['-np', '3', '--ssi', 'cr', 'self', '--ssi', 'rpi', 'crtcp'].concat([
        '--ssi',
        'crlam_self_dir',
        ck.root,
        join(FIXTURES, 'cr-phases.mjs'),
      ]),
      env,
    );
    const ran = await job.done;
    expect(ran.code, job.out).toBe(0);
    const line = /OUTCOME (.*)/.exec(job.out);
    expect(line, job.out).not.toBeNull();
    const o = JSON.parse(line![1]!);
    expect(o.ok, job.out).toBe(true);
    const p = o.phases;
    for (const k of PHASES) {
      expect(Number.isFinite(p[k]) && p[k] >= 0, `${k} = ${p[k]}`).toBe(true);
    }
    const eps = 0.5; // ms: rounding of separate clock reads
    // mpirun's three intervals are consecutive parts of the whole
    expect(p.prepareMs + p.savedMs + p.commitMs).toBeLessThanOrEqual(o.ms + eps);
    // the slowest rank's drain + save lies within GO → every SAVED, and holds its parts
    expect(p.drainSaveMs).toBeLessThanOrEqual(p.savedMs + eps);
    expect(p.drainSaveMs).toBeLessThanOrEqual(p.drainMs + p.saveMs + eps);
    expect(p.drainSaveMs + eps).toBeGreaterThanOrEqual(Math.max(p.drainMs, p.saveMs));
    // a save writes a file durably: it takes some time, and so does the interrupt round
    expect(p.saveMs).toBeGreaterThan(0);
    expect(p.prepareMs).toBeGreaterThan(0);
  }, 120_000);
});
