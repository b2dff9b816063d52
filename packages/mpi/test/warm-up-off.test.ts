import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { MPI, type Mpi } from '../src/index';
import { loopRpi, soloRuntime } from './helpers/loop-rpi';

/** `mpi_base_warm_up 0`: MPI.init sends nothing to itself (the default: warm-up.test.ts). */
let mpi: Mpi;
const said: string[] = [];

beforeAll(async () => {
  const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
    said.push(String(chunk));
    return true;
  });
  try {
    mpi = await MPI.init({
      runtime: soloRuntime().runtime,
      modules: [loopRpi().module],
      ssi: { rpi: 'loop', mpi_verbose: 10, mpi_base_abort_on_unhandled: 0, mpi_base_warm_up: 0 },
      searchFrom: [],
    });
  } finally {
    spy.mockRestore();
  }
});
afterAll(async () => {
  if (!MPI.finalized()) await mpi?.finalize();
});

describe('MPI.init with mpi_base_warm_up 0', () => {
  it('runs no warm-up', () => {
    expect(mpi.params.get('mpi_base_warm_up')).toBe(false);
    expect(said.join('')).toMatch(/initialized: rank 0 of 1/); // the verbose output is there
    expect(said.join('')).not.toMatch(/rehearsed the message paths/);
  });
});
