import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// The job harness (mpirun started with its output collected, lamcheckpoint, lamrestart, the job
// directory) is shared with the other cr modules' tests: it lives in @ssi/cli/testing.
export { jobDir, lamcheckpoint, lamrestart, RunningJob, startJob } from '@ssi/cli/testing';

export const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');

/** A private checkpoint root for one test (removed by `cleanup`). */
export function checkpointRoot(): { root: string; cleanup(): void } {
  const root = mkdtempSync(join(tmpdir(), 'ssi-cr-test-'));
  return { root, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}
