import {
  DATATYPE_CASES,
  datatypesProgram,
  explainJob,
  killAllJobs,
  launchJob,
} from '@ssi/mpi/testing';
import { afterEach, describe, expect, it } from 'vitest';

/**
 * The datatype suite over tcp in real processes: every constructor (nested, negative strides and
 * displacements), pack/unpack against typed receives, every send mode, a 1 Mi-double column,
 * zero counts, truncation, getElements on partial receives, bad input, and the collectives with a
 * column type (lam_basic).
 */
afterEach(() => killAllJobs());

describe('derived datatypes over tcp', () => {
  it.each([2, 3, 4])('every case on %i ranks', async (np) => {
    const r = await launchJob({
      np,
      program: datatypesProgram,
      args: [...DATATYPE_CASES],
      ssi: { rpi: 'tcp', coll: 'lam_basic' },
      timeoutMs: 180_000,
      label: `datatypes on ${np} ranks`,
    });
    expect(r.ok, explainJob(r)).toBe(true);
    for (const c of DATATYPE_CASES) expect(r.output).toContain(`case ${c} ok`);
  });
});
