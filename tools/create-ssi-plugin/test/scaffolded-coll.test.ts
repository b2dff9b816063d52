import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startCli, waitChild, waitFor } from '@ssi/cli/testing';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createPlugin } from '../src/index';

/**
 * A scaffolded coll module, as generated, is selected and runs: a real 2-rank job with the built
 * mpirun (its own private universe, under this test's own session suffix) finds the module in
 * a drop-in directory, uses its bcast and barrier and lam_basic's allreduce.
 */
const work = mkdtempSync(join(tmpdir(), 'ssi-scaffold-coll-'));
const fixtures = resolve(import.meta.dirname, 'fixtures');
const SUFFIX = `scaffold-coll-${process.pid}`;
const live = new Set<ChildProcess>();

afterEach(() => {
  for (const c of live) c.kill('SIGKILL');
  live.clear();
});

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('a scaffolded coll module', () => {
  it('is selected with --ssi coll <name> and runs its collectives, lam_basic the rest', async () => {
    const dropIns = join(work, 'modules');
    createPlugin({ dir: join(dropIns, 'acme-coll-demo'), type: 'coll', name: 'demo' });
    const args = [
      '-np',
      '2',
      '--ssi',
      'ssi_base_module_path',
      dropIns,
      '--ssi',
      'coll',
      'demo',
      '--ssi',
      'coll_verbose',
      '10',
      'coll-job.ts',
    ];
    const child = startCli(
      'mpirun',
      args,
      { ...process.env, LAM_MPI_SESSION_SUFFIX: SUFFIX },
      { cwd: fixtures },
    );
    live.add(child);
    const r = await waitChild(child, `mpirun ${args.join(' ')}`, 90_000);
    const all = `${r.stdout}\n${r.stderr}`;
    expect(r.code, all).toBe(0);
    for (const rank of [0, 1]) {
      expect(r.stdout).toMatch(
        new RegExp(`^\\[${rank}\\] rank ${rank}: bcast from 1 ok, allreduce 3$`, 'm'),
      );
      // Each rank says which module its COMM_WORLD got, and what the module implements itself.
      const said = `[${rank}] [rank ${rank}] [ssi coll] COMM_WORLD:`;
      expect(all).toContain(`${said} coll module demo, missing functions from lam_basic`);
      expect(all).toContain(`${said} demo implements barrier, bcast (size 2)`);
    }
    // mpirun's private universe (ours alone: our suffix) is gone with the job.
    await waitFor(`no session directory of suffix ${SUFFIX} left`, () => !leftover(), 10_000);
  });
});

/** A session directory of this test's own suffix that outlived the job. */
function leftover(): boolean {
  return readdirSync(tmpdir()).some((d) => d.startsWith('ssi-') && d.endsWith(`-${SUFFIX}`));
}
