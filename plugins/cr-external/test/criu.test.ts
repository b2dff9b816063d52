import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { criuUnavailable } from '../src/backends';
import {
  FIXTURES,
  jobDir,
  lamcheckpoint,
  type RunningJob,
  startJob,
  workDir,
} from './external-harness';

// The issue: "The CRIU back end's tests must run wherever `criu check` passes and, where it
// fails, report visibly that they did not run and why". On these machines `criu check` fails
// (CRIU 3.17 and this kernel's vDSO); the reason is in the test's name, so the skip shows it.
const unavailable = criuUnavailable();
if (unavailable !== null) console.warn(`[cr-external] CRIU tests NOT RUN: ${unavailable}`);

let job: RunningJob | undefined;
let cleanup: (() => void) | undefined;
afterEach(() => {
  job?.kill();
  cleanup?.();
  job = undefined;
  cleanup = undefined;
});

describe('the criu back end', () => {
  it.skipIf(unavailable !== null)(
    `criu dump --leave-running of 2 ranks with messages in flight, the job goes on${unavailable ? ` — NOT RUN: ${unavailable}` : ''}`,
    async () => {
      const w = workDir();
      cleanup = w.cleanup;
      job = startJob([
        '-np',
        '2',
        '--ssi',
        'cr',
        'external',
        '--ssi',
        'crmpi_external_backend',
        'criu',
        '--ssi',
        'rpi',
        'crtcp',
        '--ssi',
        'crlam_external_dir',
        w.root,
        join(FIXTURES, 'ring.mjs'),
        w.ctl,
      ]);
      await job.lines(/ring running/, 2, 'the ring to run');
      const r = await lamcheckpoint(job.pid);
      expect(r.stdout + r.stderr, job.out).toMatch(/checkpoint series 1 of job/);
      writeFileSync(join(w.ctl, 'stop'), '');
      const end = await job.done;
      expect(end.code, job.out).toBe(0);
      expect(job.out.match(/ring OK after \d+ steps, 1 checkpoints continued/g)).toHaveLength(2);
      for (const rank of [0, 1]) {
        const image = join(jobDir(w.root), 'series-1', `external-${rank}`, 'image');
        expect(existsSync(join(image, 'inventory.img')), readdirSync(image).join(' ')).toBe(true);
      }
    },
  );

  it('where criu check fails, selecting the criu back end is refused with its reason', async () => {
    if (unavailable === null) return; // covered by the test above
    const w = workDir();
    cleanup = w.cleanup;
    job = startJob([
      '-np',
      '1',
      '--ssi',
      'cr',
      'external',
      '--ssi',
      'crmpi_external_backend',
      'criu',
      '--ssi',
      'rpi',
      'crtcp',
      '--ssi',
      'crlam_external_dir',
      w.root,
      join(FIXTURES, 'ring.mjs'),
      w.ctl,
    ]);
    const end = await job.done;
    expect(end.code).not.toBe(0);
    expect(job.out).toMatch(/back end criu: `criu check` failed|criu cannot be run/);
  });
});
