import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type RunningJob, startJob } from '@ssi/cli/testing';
import { afterEach } from 'vitest';

// The job harness (mpirun started with its output collected, lamcheckpoint, lamrestart, the job
// directory) is shared with the other cr modules' tests: it lives in @ssi/cli/testing.
export { jobDir, lamcheckpoint, lamrestart, RunningJob, startJob } from '@ssi/cli/testing';

export const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');

/** A private checkpoint root for one test (removed by `cleanup`). */
export function checkpointRoot(): { root: string; cleanup(): void } {
  const root = mkdtempSync(join(tmpdir(), 'ssi-cr-test-'));
  return { root, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

/**
 * One checkpointable job per test: `start` runs `mpirun -np <np> --ssi cr self --ssi rpi crtcp
 * <ssi...> --ssi crlam_self_dir <a private root> <fixture> <args...>`; after each test the job is
 * killed and its root removed, also when the test failed.
 */
export function checkpointableJobPerTest() {
  let job: RunningJob | undefined;
  let ck: { root: string; cleanup(): void } | undefined;
  afterEach(() => {
    job?.kill();
    ck?.cleanup();
    job = undefined;
    ck = undefined;
  });
  return {
    start(
      np: number,
      fixture: string,
      args: string[] = [],
      ssi: string[] = [],
    ): { job: RunningJob; root: string } {
      ck = checkpointRoot();
      const base = ['-np', String(np), '--ssi', 'cr', 'self', '--ssi', 'rpi', 'crtcp', ...ssi];
      const program = [join(FIXTURES, fixture), ...args];
      job = startJob([...base, '--ssi', 'crlam_self_dir', ck.root, ...program]);
      return { job, root: ck.root };
    },
  };
}
