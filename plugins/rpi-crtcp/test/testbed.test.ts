import { join } from 'node:path';
import { bootTestbedUniverse, type TestbedUniverse } from '@ssi/cli/testing';
import { testbedAvailable } from '@ssi/testbed';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * crtcp across test hosts (one sshd per loopback address): a universe of three nodes booted with
 * lamboot, then `mpirun N --ssi rpi crtcp` of the drain job (one rank per node): messages in
 * flight between nodes are drained at the checkpoint, then the ranks restart (new connections
 * to every node's current address) and check every byte.
 */
const available = testbedAvailable();
const program = join(import.meta.dirname, 'fixtures', 'drain-job.mjs');
/** The universe booted over the test hosts (in beforeAll, when they can be had). */
let u: TestbedUniverse;

beforeAll(async () => {
  if (available.ok) u = await bootTestbedUniverse({ hosts: 3, name: 'crtcp-tb' });
});

afterAll(() => u?.halt());

describe.skipIf(!available.ok)(
  `crtcp on three test hosts (${available.ok ? 'real sshd' : available.reason})`,
  () => {
    it.each(['restart', 'continue'])(
      'drains between nodes, then %s, every byte checked',
      async (mode) => {
        const r = await u.run(
          'mpirun',
          ['N', '--ssi', 'rpi', 'crtcp', '--ssi', 'rpi_verbose', '10', program, mode, '2'],
          { timeoutMs: 180_000 },
        );
        const out = `${r.stdout}\n${r.stderr}`;
        expect(r.code, out).toBe(0);
        expect(out.match(/OK rank \d/g)).toHaveLength(3);
        expect(out.match(/DRAIN \{/g)).toHaveLength(3 * 2);
        if (mode === 'restart') expect(out).toMatch(/crtcp: rank \d reconnected to 2 peers/);
        // the ranks ran on the three hosts: each listened on its own node's address (at init
        // and, after each restart, again for the new connections)
        for (const h of u.testbed.hosts) {
          const at = new RegExp(`listening on ${h.address.replaceAll('.', '\\.')}:`, 'g');
          expect(out.match(at)?.length, `listens on ${h.address}`).toBe(mode === 'restart' ? 3 : 1);
        }
      },
    );
  },
);
