import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startCli, waitChild, waitFor } from '@ssi/cli/testing';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createPlugin } from '../src/index';

/**
 * Scaffolded modules, as generated, are selected and run: a real 2-rank job with the built
 * mpirun (its own private universe, under this test's own session suffix) finds the module in a
 * drop-in directory and uses it.
 */
const work = mkdtempSync(join(tmpdir(), 'ssi-scaffold-'));
const fixtures = resolve(import.meta.dirname, 'fixtures');
const SUFFIX = `scaffold-${process.pid}`;
const live = new Set<ChildProcess>();

afterEach(() => {
  for (const c of live) c.kill('SIGKILL');
  live.clear();
});

afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Scaffolds a `type` module `name` into a fresh drop-in directory and runs `program` on 2 ranks. */
async function runScaffolded(type: 'coll' | 'rpi', name: string, program: string) {
  const dropIns = join(work, `${type}-modules`);
  createPlugin({ dir: join(dropIns, `acme-${type}-${name}`), type, name });
  const args = ['-np', '2', '--ssi', 'ssi_base_module_path', dropIns];
  args.push('--ssi', type, name, '--ssi', `${type}_verbose`, '10', program);
  const child = startCli(
    'mpirun',
    args,
    { ...process.env, LAM_MPI_SESSION_SUFFIX: SUFFIX },
    { cwd: fixtures },
  );
  live.add(child);
  const r = await waitChild(child, `mpirun ${args.join(' ')}`, 90_000);
  // mpirun's private universe (ours alone: our suffix) is gone with the job.
  await waitFor(`no session directory of suffix ${SUFFIX} left`, () => !leftover(), 10_000);
  return { ...r, all: `${r.stdout}\n${r.stderr}` };
}

describe('a scaffolded coll module', () => {
  it('is selected with --ssi coll <name> and runs its collectives, lam_basic the rest', async () => {
    const r = await runScaffolded('coll', 'demo', 'coll-job.ts');
    expect(r.code, r.all).toBe(0);
    for (const rank of [0, 1]) {
      expect(r.stdout).toMatch(
        new RegExp(`^\\[${rank}\\] rank ${rank}: bcast from 1 ok, allreduce 3$`, 'm'),
      );
      // Each rank says which module its COMM_WORLD got, and what the module implements itself.
      const said = `[${rank}] [rank ${rank}] [ssi coll] COMM_WORLD:`;
      expect(r.all).toContain(`${said} coll module demo, missing functions from lam_basic`);
      expect(r.all).toContain(`${said} demo implements barrier, bcast (size 2)`);
    }
  });
});

describe('a scaffolded rpi module', () => {
  it('is selected with --ssi rpi <name> and moves every message through tcp it opened', async () => {
    const r = await runScaffolded('rpi', 'relay', 'rpi-job.ts');
    expect(r.code, r.all).toBe(0);
    for (const rank of [0, 1]) {
      expect(r.stdout).toMatch(
        new RegExp(`^\\[${rank}\\] rank ${rank}: rpi relay, 4201032 bytes checked$`, 'm'),
      );
      const said = `[${rank}] [rank ${rank}] [ssi rpi]`;
      expect(r.all).toContain(`${said} relay: moving messages through tcp to 1 peers`);
      // Five sends of its own, plus whatever MPI.finalize's synchronization adds: all via relay.
      expect(r.all).toMatch(
        new RegExp(`\\[${rank}\\] \\[rank ${rank}\\] \\[ssi rpi\\] relay: [5-9] sends started`),
      );
    }
  });
});

/** A session directory of this test's own suffix that outlived the job. */
function leftover(): boolean {
  return readdirSync(tmpdir()).some((d) => d.startsWith('ssi-') && d.endsWith(`-${SUFFIX}`));
}
