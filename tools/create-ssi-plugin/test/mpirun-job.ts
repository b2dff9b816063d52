import type { ChildProcess } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { startCli, waitChild, waitFor } from '@ssi/cli/testing';

/**
 * Real `mpirun` jobs for the scaffold's tests: the built command boots its own private universe
 * under a session suffix of this test process (apart from every other job on the machine), and
 * must leave no session directory behind. `killLive` (afterEach) stops whatever still runs.
 */
const live = new Set<ChildProcess>();

export function killLive(): void {
  for (const c of live) c.kill('SIGKILL');
  live.clear();
}

export async function mpirun(
  args: string[],
  opts: { cwd: string; suffix: string; timeoutMs: number },
) {
  const env = { ...process.env, LAM_MPI_SESSION_SUFFIX: opts.suffix };
  const child = startCli('mpirun', args, env, { cwd: opts.cwd });
  live.add(child);
  const r = await waitChild(child, `mpirun ${args.join(' ')}`, opts.timeoutMs).finally(() =>
    live.delete(child),
  );
  await waitFor(
    `no session directory of suffix ${opts.suffix} left`,
    () => !readdirSync(tmpdir()).some((d) => d.startsWith('ssi-') && d.endsWith(`-${opts.suffix}`)),
    10_000,
  );
  return { ...r, all: `${r.stdout}\n${r.stderr}` };
}
