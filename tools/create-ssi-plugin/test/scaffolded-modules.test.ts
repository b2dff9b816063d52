import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createPlugin } from '../src/index';
import { killLive, mpirun } from './mpirun-job';

/**
 * Scaffolded modules, as generated, are selected and run: a real 2-rank job with the built
 * mpirun (its own private universe, under this test's own session suffix) finds the module in a
 * drop-in directory and uses it.
 */
const work = mkdtempSync(join(tmpdir(), 'ssi-scaffold-'));
const fixtures = resolve(import.meta.dirname, 'fixtures');
const SUFFIX = `scaffold-${process.pid}`;

afterEach(() => killLive());
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Scaffolds a `type` module `name` into a fresh drop-in directory and runs `program` on 2 ranks. */
async function runScaffolded(type: 'coll' | 'rpi', name: string, program: string) {
  const dropIns = join(work, `${type}-modules`);
  createPlugin({ dir: join(dropIns, `acme-${type}-${name}`), type, name });
  const args = ['-np', '2', '--ssi', 'ssi_base_module_path', dropIns];
  args.push('--ssi', type, name, '--ssi', `${type}_verbose`, '10', program);
  return mpirun(args, { cwd: fixtures, suffix: SUFFIX, timeoutMs: 90_000 });
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
  it('is selected with --ssi rpi <name> and moves every message over its own sockets', async () => {
    const r = await runScaffolded('rpi', 'fab', 'rpi-job.ts');
    expect(r.code, r.all).toBe(0);
    for (const rank of [0, 1]) {
      expect(r.stdout).toMatch(
        new RegExp(`^\\[${rank}\\] rank ${rank}: rpi fab, 4201032 bytes checked$`, 'm'),
      );
      const said = `[${rank}] [rank ${rank}] [ssi rpi] fab: rank ${rank}`;
      expect(r.all).toContain(`${said} connected to 1 peers`);
      // Five messages of its own (plus whatever MPI.finalize's synchronization adds).
      const sent = r.all.match(new RegExp(`\\[ssi rpi\\] fab: rank ${rank} sent (\\d+) messages`));
      expect(Number(sent?.[1]), r.all).toBeGreaterThanOrEqual(5);
    }
    expect(r.all).not.toContain('tcp:'); // tcp is not opened at all
  });
});
