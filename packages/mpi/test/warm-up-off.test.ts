import { describe, expect, it } from 'vitest';
import { soloMpiSaying } from './helpers/loop-rpi';

/** `mpi_base_warm_up 0`: MPI.init sends nothing to itself (the default: warm-up.test.ts). */
const solo = soloMpiSaying({
  mpi_verbose: 10,
  mpi_base_abort_on_unhandled: 0,
  mpi_base_warm_up: 0,
});
const said = solo.said;

describe('MPI.init with mpi_base_warm_up 0', () => {
  it('runs no warm-up', () => {
    expect(solo.mpi().params.get('mpi_base_warm_up')).toBe(false);
    expect(said.join('')).toMatch(/initialized: rank 0 of 1/); // the verbose output is there
    expect(said.join('')).not.toMatch(/rehearsed the message paths/);
  });
});
