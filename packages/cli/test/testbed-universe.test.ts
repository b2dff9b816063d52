import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { sessionDirFor } from '@ssi/lam';
import { testbedAvailable } from '@ssi/testbed';
import { describe, expect, it } from 'vitest';
import { bootTestbedUniverse, type TestbedUniverse, waitFor } from '../src/testing/index';

/**
 * The helper other packages' tests boot their universes with (`@ssi/cli/testing`): a universe
 * over two real test hosts (one sshd per loopback address), used and halted; a boot that fails
 * is reported with lamboot's words and leaves nothing behind.
 */
const available = testbedAvailable();

/** Processes whose environment names this session suffix (lamds and what they started). */
function processesOf(suffix: string): string[] {
  const ours = new RegExp(`${suffix}(?![0-9])`); // tbu-12 is not tbu-123
  return readdirSync('/proc')
    .filter((pid) => /^\d+$/.test(pid) && Number(pid) !== process.pid)
    .filter((pid) => {
      try {
        return ours.test(readFileSync(`/proc/${pid}/environ`, 'utf8'));
      } catch {
        return false; // gone meanwhile, or not ours to read
      }
    });
}

describe.skipIf(!available.ok)(
  `bootTestbedUniverse (${available.ok ? 'real sshd' : available.reason})`,
  () => {
    it('boots over two hosts with their schema lines; halt ends the lamds, sessions and work', async () => {
      let u: TestbedUniverse | undefined;
      try {
        u = await bootTestbedUniverse({ hosts: 2, name: 'tbu', perHost: () => 'cpu=2' });
        expect(u.suffix).toBe(`tbu-${process.pid}`);
        expect(u.env().LAM_MPI_SESSION_HOST).toBe(u.testbed.hosts[0]!.address);
        const nodes = await u.run('lamnodes', []);
        expect(nodes.code, nodes.stderr).toBe(0);
        for (const h of u.testbed.hosts)
          expect(nodes.stdout).toMatch(new RegExp(`${h.address.replaceAll('.', '\\.')}:2:`));
        expect(processesOf(u.suffix).length).toBeGreaterThanOrEqual(2);
        await u.halt();
        expect(existsSync(u.work)).toBe(false);
        for (const h of u.testbed.hosts)
          expect(existsSync(sessionDirFor(h.address, u.suffix))).toBe(false);
        // lamhalt returns when each lamd closed its connection; the process exits a moment later
        // (it lingers up to lamd's shutdown linger for the last answers to drain).
        await waitFor(
          `the universe's processes (${processesOf(u.suffix).join(', ')}) to exit after halt`,
          () => processesOf(u!.suffix).length === 0,
          10_000,
        );
        await u.halt(); // a second halt (afterAll after a test's own) does nothing
      } finally {
        await u?.halt();
      }
    });

    it('a boot that fails: rejects with lamboot output, no work directory or lamd left', async () => {
      const name = `tbu-bad-${process.pid}`;
      const before = readdirSync(tmpdir()).filter((f) => f.startsWith(`ssi-${name}-`));
      const boot = bootTestbedUniverse({ hosts: 1, name, perHost: () => 'cpus=2' });
      await expect(boot).rejects.toThrow(
        /lamboot over 1 test hosts failed:[\s\S]*unknown key "cpus"/,
      );
      expect(readdirSync(tmpdir()).filter((f) => f.startsWith(`ssi-${name}-`))).toEqual(before);
      expect(processesOf(`${name}-${process.pid}`)).toEqual([]);
    });
  },
);
