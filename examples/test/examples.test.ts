import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/** Each example through the real mpirun on the embedded one-node universe, as a newcomer runs it. */
const here = resolve(import.meta.dirname, '..');
const mpirun = resolve(here, '../packages/cli/dist/bin/mpirun.js');

function run(np: number, args: string[]) {
  const r = spawnSync(process.execPath, [mpirun, '-np', String(np), ...args], {
    cwd: here,
    encoding: 'utf8',
    timeout: 110_000,
    env: { ...process.env, LAM_MPI_SESSION_SUFFIX: `examples-${process.pid}` },
  });
  if (r.error) throw new Error(`mpirun ${args.join(' ')}: ${r.error.message}`);
  expect(r.status, `mpirun -np ${np} ${args.join(' ')}:\n${r.stdout}\n${r.stderr}`).toBe(0);
  return r.stdout;
}

describe('examples', () => {
  it('ring: every rank adds one per round', () => {
    const out = run(4, ['ring.ts']);
    expect(out).toContain('[0] round 1: the token came back as 3');
    expect(out).toContain('[0] round 3: the token came back as 9');
  });

  it('pi: the integral is pi to many digits, on any number of ranks', () => {
    for (const np of [1, 3]) {
      const out = run(np, ['pi.ts', '1000000']);
      const pi = Number(/pi is approximately ([\d.]+)/.exec(out)?.[1]);
      expect(Math.abs(pi - Math.PI)).toBeLessThan(1e-10);
    }
  });

  it('heat: the decomposition (1-D and 2-D Cartesian grids) does not change the answer', () => {
    const probe = (np: number) => {
      const out = run(np, ['heat.ts', '40', '1e-4']);
      const m = /temperature at row 10, middle column: ([\d.]+)/.exec(out);
      expect(m, out).not.toBeNull();
      return Number(m![1]);
    };
    const one = probe(1);
    expect(one).toBeGreaterThan(0);
    expect(one).toBeLessThan(100);
    expect(probe(3)).toBe(one); // a 3 x 1 grid
    expect(probe(4)).toBe(one); // a 2 x 2 grid: halo columns through a vector datatype
  });
});
