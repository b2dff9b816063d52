import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { discoverModules, ParamRegistry } from '@ssi/core';
import {
  bootUniverse,
  haltUniverse,
  isLamError,
  LamClient,
  lamBin,
  reconUniverse,
  sessionDirFor,
  wipeSession,
  wipeUniverse,
} from '@ssi/lam';
import { startTestbed, type Testbed, testbedAvailable } from '@ssi/testbed';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import rsh from '../src/index';

const available = testbedAvailable();
const SUFFIX = `r${process.pid}`;
const work = mkdtempSync(join(tmpdir(), 'ssi-rsh-test-'));
const prefix = join(work, 'prefix');
let tb: Testbed;

beforeAll(async () => {
  if (!available.ok) return;
  mkdirSync(join(prefix, 'bin'), { recursive: true });
  symlinkSync(lamBin('hboot'), join(prefix, 'bin', 'hboot'));
  // h4's sshd does not accept our key
  tb = await startTestbed({ hosts: 4, rejectKeyFor: [3] });
});

afterAll(async () => {
  await tb?.stop();
  rmSync(work, { recursive: true, force: true });
});

afterEach(async () => {
  // lamhalt's way first, then force: no lamd and no session directory outlives a test
  if (!tb) return;
  const first = tb.hosts[0]!;
  if (existsSync(sessionDirFor(first.address, SUFFIX))) {
    try {
      const c = await LamClient.connect({ env: env() });
      await haltUniverse(c, 10_000);
      c.close();
    } catch {}
  }
  for (const h of tb.hosts) await wipeSession(h.address, SUFFIX, 2000);
});

function env(extra: Record<string, string> = {}) {
  return {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/',
    LAM_MPI_SESSION_HOST: tb.hosts[0]!.address,
    LAM_MPI_SESSION_SUFFIX: SUFFIX,
    LAM_MPI_SSI_boot_rsh_agent: tb.sshCommand.join(' '),
    LAM_MPI_SSI_boot_base_timeout: '20',
    ...extra,
  } as Record<string, string | undefined>;
}

function engine(extra: Record<string, string> = {}) {
  const e = env(extra);
  return {
    ssi: {
      params: new ParamRegistry({ env: e }),
      discovery: discoverModules({ staticModules: [rsh] }),
    },
    env: e,
    warn: () => {},
  };
}

const schema = (
  name: string,
  hosts: number[],
  perHost: (i: number) => string = () => `prefix=${prefix}`,
) =>
  tb.writeBootSchema(name, {
    hosts: hosts.map((i) => tb.hosts[i]!),
    perHost: (h) => perHost(tb.hosts.indexOf(h)),
  });

function leftovers(): string[] {
  return readdirSync(tmpdir()).filter((n) => n.startsWith('ssi-') && n.endsWith(`-${SUFFIX}`));
}

describe.skipIf(!available.ok)(
  `the rsh module on the testbed (${available.ok ? 'real sshd' : available.reason})`,
  () => {
    it('boots lamds through ssh; they outlive the remote shell and know each other', async () => {
      const file = schema(
        'three',
        [0, 1, 2],
        (i) => `prefix=${prefix}${i === 2 ? ' user=root cpu=2' : ''}`,
      );
      const joined: string[] = [];
      const report = await bootUniverse({
        ...engine(),
        schemaFile: file,
        onNode: (n) => joined.push(n.name),
      });
      expect(report.module).toBe('rsh');
      expect(joined.sort()).toEqual(
        tb.hosts
          .slice(0, 3)
          .map((h) => h.address)
          .sort(),
      );
      expect(report.universe.map((n) => [n.name, n.cpus, n.origin])).toEqual([
        [tb.hosts[0]!.address, 1, true],
        [tb.hosts[1]!.address, 1, false],
        [tb.hosts[2]!.address, 2, false],
      ]);
      const c = await LamClient.connect({ env: env() });
      for (const n of report.universe) expect((await c.ping(n.id)).pid).toBe(n.pid);
      const secret = readFileSync(join(report.sessionDir, 'secret'), 'utf8').trim();
      for (const n of report.universe) {
        // started through ssh, but not under sshd: the lamd is a session leader of its own
        const stat = readFileSync(`/proc/${n.pid}/stat`, 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        expect(Number(fields[3])).toBe(n.pid);
        // the secret is on no command line and in no environment
        expect(readFileSync(`/proc/${n.pid}/cmdline`, 'utf8')).not.toContain(secret);
        expect(readFileSync(`/proc/${n.pid}/environ`, 'utf8')).not.toContain(secret);
      }
      c.close();
    });

    it('a host whose sshd refuses the key fails the boot with a clear message and leaves nothing', async () => {
      const err = await bootUniverse({
        ...engine(),
        schemaFile: schema('refused', [0, 1, 3]),
      }).catch((e) => e);
      expect(err.message).toMatch(
        new RegExp(
          `lamboot failed on n2 \\(${tb.hosts[3]!.address.replace(/\./g, '\\.')}\\): ssh to .* was refused .*Permission denied`,
        ),
      );
      await expectNothingLeft();
    });

    it('a remote node without the installation: named, with what to do', async () => {
      const missing = schema('missing', [0, 1], (i) =>
        i === 1 ? 'prefix=/nonexistent/ssi' : `prefix=${prefix}`,
      );
      await expect(bootUniverse({ ...engine(), schemaFile: missing })).rejects.toThrow(
        `lamboot failed on n1 (${tb.hosts[1]!.address}): lamd not found on ${tb.hosts[1]!.address} (looked for /nonexistent/ssi/bin/hboot): install @ssi/cli there or set prefix= in the boot schema`,
      );
      const onPath = schema('onpath', [0, 1], (i) => (i === 1 ? '' : `prefix=${prefix}`));
      const err = await bootUniverse({ ...engine(), schemaFile: onPath }).catch((e) => e);
      expect(isLamError(err, 'NOT_INSTALLED')).toBe(true);
      expect(err.message).toContain(`lamd not found on ${tb.hosts[1]!.address} (not on its PATH)`);
      await expectNothingLeft();
    });

    it('an unreachable host fails fast with the reason', async () => {
      const file = join(work, 'unreachable');
      const text = `${tb.hosts[0]!.address} prefix=${prefix}\n127.0.0.253 prefix=${prefix}\n`;
      (await import('node:fs')).writeFileSync(file, text);
      const err = await bootUniverse({ ...engine(), schemaFile: file }).catch((e) => e);
      expect(err.message).toMatch(
        /lamboot failed on n1 \(127\.0\.0\.253\): cannot reach 127\.0\.0\.253 with ssh: .*Connection refused/,
      );
      await expectNothingLeft();
    });

    it('recon reports each host; wipe takes down lamds, also after one was killed', async () => {
      const reports = await reconUniverse({
        ...engine(),
        schemaFile: schema('recon', [0, 1, 2, 3], (i) =>
          i === 2 ? 'prefix=/nope' : `prefix=${prefix}`,
        ),
      });
      expect(reports.map((r) => r.ok)).toEqual([true, true, false, false]);
      expect(reports[0]!.message).toMatch(/^recon ok /);
      expect(reports[2]!.message).toMatch(/lamd not found on/);
      expect(reports[3]!.message).toMatch(/was refused/);

      const file = schema('wipe', [0, 1, 2]);
      const report = await bootUniverse({ ...engine(), schemaFile: file });
      const c = await LamClient.connect({ env: env() });
      const sleeper = await c.spawn(2, { argv: ['sleep', '60'] });
      c.close();
      process.kill(report.universe[1]!.pid, 'SIGKILL');
      const wiped = await wipeUniverse({ ...engine(), schemaFile: file });
      expect(wiped.map((r) => r.ok)).toEqual([true, true, true]);
      expect(wiped[0]!.message).toMatch(/lamd stopped/);
      expect(wiped[1]!.message).toMatch(/lamd none/);
      for (const n of report.universe) expect(alive(n.pid)).toBe(false);
      expect(alive(sleeper.pid)).toBe(false);
      await expectNothingLeft();
    });
  },
);

function alive(pid: number): boolean {
  try {
    return !/\) [ZX] /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

async function expectNothingLeft(): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (leftovers().length > 0 && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 50));
  expect(leftovers()).toEqual([]);
}
