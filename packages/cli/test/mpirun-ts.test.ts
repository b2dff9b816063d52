import type { ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startCli, waitChild } from '../src/testing';

/**
 * TypeScript entry points compiled once per job (src/mpirun/ts-entry.ts): the ranks run the
 * compiled module without tsx, stack traces point at the .ts lines, and what a bundle would run
 * differently still runs through tsx. Real mpirun, each on a private universe of its own.
 */
const fixtures = resolve(import.meta.dirname, 'fixtures');
const live = new Set<ChildProcess>();

function mpirun(args: string[], env: Record<string, string> = {}) {
  const child = startCli(
    'mpirun',
    args,
    { ...process.env, LAM_MPI_SESSION_SUFFIX: `mpirun-ts-test-${process.pid}`, ...env },
    { cwd: fixtures },
  );
  live.add(child);
  return waitChild(child, `mpirun ${args.join(' ')}`, 90_000).finally(() => live.delete(child));
}

afterEach(() => {
  for (const c of live) c.kill('SIGKILL');
});

interface TsLine {
  rank: number;
  tsx: boolean;
  script: string;
  sum: number;
}

const tsLines = (stdout: string): TsLine[] =>
  [...stdout.matchAll(/^\[\d+\] TS (.*)$/gm)].map((m) => JSON.parse(m[1]!) as TsLine);

describe('mpirun compiles a TypeScript entry once per job', () => {
  it('ranks run the compiled entry and its local import without tsx', async () => {
    const r = await mpirun(['-v', '-np', '3', 'ts-compiled.ts']);
    expect(r.code, r.stderr).toBe(0);
    const lines = tsLines(r.stdout);
    expect(lines.map((l) => l.rank).sort()).toEqual([0, 1, 2]);
    for (const l of lines) {
      expect(l.sum).toBe(3);
      expect(l.tsx).toBe(false);
      expect(l.script).toMatch(/node_modules\/\.cache\/ssi-mpirun\/[0-9a-f]{32}\.mjs$/);
    }
    expect(new Set(lines.map((l) => l.script)).size).toBe(1); // one compiled file for the job
    expect(r.stderr).not.toContain('runs through tsx');
  });

  it("a rank's stack trace names the user's .ts file and line", async () => {
    const r = await mpirun(['-np', '2', 'ts-compiled.ts', 'fail']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('deliberate failure on rank 1');
    expect(r.stderr).toMatch(/ts-helper\.ts:15:\d+/);
  });

  it('an entry that asks where its file is runs through tsx, and -v says why', async () => {
    const r = await mpirun(['-v', '-np', '1', 'ts-place-bound.ts']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`[0] DIR ${fixtures} true`);
    expect(r.stderr).toMatch(/ts-place-bound\.ts runs through tsx in every rank: .*import\.meta/);
  });

  it('SSI_MPIRUN_TS=tsx keeps tsx in every rank', async () => {
    const r = await mpirun(['-np', '2', 'ts-compiled.ts'], { SSI_MPIRUN_TS: 'tsx' });
    expect(r.code, r.stderr).toBe(0);
    const lines = tsLines(r.stdout);
    expect(lines.length).toBe(2);
    for (const l of lines) expect(l.tsx).toBe(true);
  });
});
