import type { ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { esmEntryImport, mustRunAsEsm } from '../src/mpirun/ts-entry-format';
import { startCli, waitChild } from '../src/testing';

/**
 * A user's TypeScript program beside a package.json without `"type": "module"` (the default
 * `npm init` writes): tsx would compile it as CommonJS, where top-level await is an error in
 * every rank. mpirun runs such a program as an ES module; a program that is CommonJS on purpose
 * keeps running as CommonJS.
 */
const scope = resolve(import.meta.dirname, 'fixtures', 'cjs-scope');
const live = new Set<ChildProcess>();

afterEach(() => {
  for (const child of live) child.kill('SIGKILL');
  live.clear();
});

function mpirun(args: string[]) {
  const env = { ...process.env, LAM_MPI_SESSION_SUFFIX: `ts-format-${process.pid}` };
  const child = startCli('mpirun', args, env, { cwd: scope });
  live.add(child);
  return waitChild(child, `mpirun ${args.join(' ')} in ${scope}`, 90_000);
}

describe('the module format of a .ts entry outside a "type": "module" package', () => {
  it('top-level await runs: 2 ranks, each prints once, no esbuild error', async () => {
    const r = await mpirun(['-np', '2', 'top-level-await.ts']);
    expect(r.stderr).toBe('');
    expect(r.stdout.trim().split('\n').sort()).toEqual([
      '[0] rank 0 of 2: sum 1',
      '[1] rank 1 of 2: sum 1',
    ]);
    expect(r.code).toBe(0);
  });

  it('a CommonJS program (require, __dirname) still runs as CommonJS', async () => {
    const r = await mpirun(['-np', '1', 'commonjs.ts']);
    expect(r.stdout).toBe('[0] commonjs cjs-scope\n');
    expect(r.code).toBe(0);
  });

  it('is decided by whether the file compiles as CommonJS, not by guessing', () => {
    expect(mustRunAsEsm(resolve(scope, 'top-level-await.ts'))).toBe(true);
    expect(mustRunAsEsm(resolve(scope, 'commonjs.ts'))).toBe(false);
    // In a "type": "module" package tsx compiles as ESM already: nothing to add.
    expect(mustRunAsEsm(resolve(import.meta.dirname, 'fixtures', 'mpi-hello.ts'))).toBe(false);
    expect(decodeURIComponent(decodeURIComponent(esmEntryImport('/x/app.ts')))).toContain(
      '"file:///x/app.ts"',
    );
  });
});
