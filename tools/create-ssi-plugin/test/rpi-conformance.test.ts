import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CONFORMANCE_CASES,
  conformanceProgram,
  type JobResult,
  killAllJobs,
  launchJob,
} from '@ssi/mpi/testing';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createPlugin } from '../src/index';

/**
 * Issue 19: "an rpi template that passes the conformance suite". The module is generated from the
 * template as `create-ssi-plugin --type rpi` writes it (plain JavaScript: nothing to compile), put
 * in a drop-in directory, and `@ssi/mpi/testing`'s conformance suite runs against it exactly as
 * docs/writing-an-rpi-module.md tells an author to: every case on 2, 3 and 4 real processes.
 */
const work = mkdtempSync(join(tmpdir(), 'ssi-scaffold-conformance-'));
const dropIns = join(work, 'modules');
createPlugin({ dir: join(dropIns, 'acme-rpi-relay'), type: 'rpi', name: 'relay' });

afterEach(() => killAllJobs());
afterAll(() => rmSync(work, { recursive: true, force: true }));

function explain(r: JobResult): string {
  return `${r.failure ?? ''}\n${r.output.split('\n').slice(-40).join('\n')}`;
}

describe('the scaffolded rpi module, as generated', () => {
  it.each([2, 3, 4])('passes every conformance case on %i ranks', async (np) => {
    const r = await launchJob({
      np,
      program: conformanceProgram,
      args: CONFORMANCE_CASES.filter((c) => c.minRanks <= np).map((c) => c.name),
      ssi: { rpi: 'relay', ssi_base_module_path: dropIns, rpi_verbose: 10 },
      timeoutMs: 240_000,
      label: `conformance of the scaffolded rpi on ${np} ranks`,
    });
    expect(r.ok, explain(r)).toBe(true);
    expect(r.finalized).toEqual(new Array(np).fill(true));
    // The suite ran through the generated module (selected by name, its init logging), not tcp.
    for (let rank = 0; rank < np; rank++) {
      expect(r.output).toContain(`relay: moving messages through tcp to ${np - 1} peers`);
      expect(r.output).toMatch(new RegExp(`^\\[${rank}!?\\] .*relay: \\d+ sends started`, 'm'));
    }
  });
});
