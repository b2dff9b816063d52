import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startTestbed,
  type Testbed,
  TestbedError,
  testbedAvailable,
  testbedStatus,
} from '../src/index';
import { alive, processesMentioning, waitFor } from './helpers';

const avail = testbedAvailable();
const required = !!process.env.CI || process.env.SSI_TESTBED_REQUIRED === '1';
const started: Testbed[] = [];

async function start(opts: Parameters<typeof startTestbed>[0]): Promise<Testbed> {
  const tb = await startTestbed(opts);
  started.push(tb);
  return tb;
}

afterAll(async () => {
  await Promise.all(started.map((tb) => tb.stop()));
});

describe('availability', () => {
  it('testbedAvailable() is ok here (skipped with the reason when not, except in CI)', (ctx) => {
    if (!avail.ok) {
      if (required) throw new Error(`the testbed cannot run on this CI machine: ${avail.reason}`);
      ctx.skip(avail.reason);
    }
    expect(avail).toEqual({ ok: true });
  });

  it('bad options are refused before anything starts', async () => {
    await expect(startTestbed({ hosts: 0 })).rejects.toThrow(/hosts must be an integer/);
    await expect(startTestbed({ hosts: 2, rejectKeyFor: [2] })).rejects.toThrow(
      /host indexes run from 0 to 1/,
    );
    await expect(startTestbed({ hosts: 3, firstAddress: 253 })).rejects.toBeInstanceOf(
      TestbedError,
    );
  });
});

describe.skipIf(!avail.ok)('directories', () => {
  it('refuses a dir sshd_config cannot name, and a non-empty one, creating nothing', async () => {
    const spaced = join(tmpdir(), `ssi testbed ${process.pid}`);
    await expect(startTestbed({ hosts: 1, dir: spaced })).rejects.toThrow(/whitespace/);
    expect(existsSync(spaced)).toBe(false);
    const full = mkdtempSync(join(tmpdir(), 'ssi-testbed-full-'));
    try {
      writeFileSync(join(full, 'keep'), 'x');
      await expect(startTestbed({ hosts: 1, dir: full })).rejects.toThrow(/not an empty directory/);
      expect(readFileSync(join(full, 'keep'), 'utf8')).toBe('x');
    } finally {
      rmSync(full, { recursive: true, force: true });
    }
  });
});

describe.skipIf(!avail.ok)('three test hosts', () => {
  let tb: Testbed;
  beforeAll(async () => {
    tb = await start({ hosts: 3 });
  });

  it('has h1…h3 on distinct loopback addresses, and a private directory', () => {
    expect(tb.hosts.map((h) => h.name)).toEqual(['h1', 'h2', 'h3']);
    const octets = tb.hosts.map((h) => {
      expect(h.address).toMatch(/^127\.0\.0\.\d+$/);
      return Number(h.address.split('.')[3]);
    });
    expect(new Set(octets).size).toBe(3);
    expect(octets).toEqual([...octets].sort((a, b) => a - b));
    expect(statSync(tb.dir).mode & 0o777).toBe(0o700);
    expect(existsSync(tb.keyFile)).toBe(true);
    expect(tb.sshCommand).toEqual(['ssh', '-F', tb.sshConfigPath]);
  });

  it('each login lands on that host’s own listener ($SSH_CONNECTION names its address)', async () => {
    for (const h of tb.hosts) {
      const r = await tb.ssh(h, 'echo $SSH_CONNECTION');
      expect(r.code, r.stderr).toBe(0);
      const [, , serverAddress, serverPort] = r.stdout.trim().split(' ');
      expect(serverAddress).toBe(h.address);
      expect(Number(serverPort)).toBe(tb.port);
    }
  });

  it('the ssh_config and sshCommand work as a boot agent would use them, by address and by name', async () => {
    const run = promisify(execFile);
    const h = tb.hosts[1]!;
    const byAddress = await run(tb.sshCommand[0]!, [
      ...tb.sshCommand.slice(1),
      h.address,
      'echo $SSH_CONNECTION',
    ]);
    expect(byAddress.stdout).toContain(` ${h.address} `);
    const byName = await run(tb.sshCommand[0]!, [
      ...tb.sshCommand.slice(1),
      h.name,
      'echo $SSH_CONNECTION',
    ]);
    expect(byName.stdout).toContain(` ${h.address} `);
    const config = readFileSync(tb.sshConfigPath, 'utf8');
    for (const line of [
      `IdentityFile ${tb.keyFile}`,
      'BatchMode yes',
      'StrictHostKeyChecking no',
      'UserKnownHostsFile /dev/null',
      'LogLevel ERROR',
      'ConnectTimeout 5',
    ]) {
      expect(config).toContain(`  ${line}\n`);
    }
  });

  it('remote commands find node; environment arrives only by command line or stdin', async () => {
    process.env.SSI_TESTBED_PROBE = 'must-not-leak';
    try {
      const h = tb.hosts[0]!;
      const probe = await tb.ssh(
        h,
        `command -v node >/dev/null && PASSED=by-command-line node -e "` +
          `let s='';process.stdin.on('data',d=>s+=d).on('end',()=>console.log(JSON.stringify({` +
          `leak:process.env.SSI_TESTBED_PROBE??null,cmd:process.env.PASSED,stdin:s})))"`,
        { input: 'by-stdin' },
      );
      expect(probe.code, probe.stderr).toBe(0);
      expect(JSON.parse(probe.stdout)).toEqual({
        leak: null,
        cmd: 'by-command-line',
        stdin: 'by-stdin',
      });
    } finally {
      delete process.env.SSI_TESTBED_PROBE;
    }
  });

  it('writes the boot schema', () => {
    const file = tb.writeBootSchema('bhost');
    expect(file).toBe(join(tb.dir, 'bhost'));
    expect(readFileSync(file, 'utf8')).toBe(tb.hosts.map((h) => `${h.address} cpu=1\n`).join(''));

    const custom = tb.writeBootSchema(join(tb.dir, 'custom'), {
      hosts: tb.hosts.slice(1),
      perHost: (h) => (h.name === 'h2' ? 'schedule=no' : ''),
    });
    expect(readFileSync(custom, 'utf8')).toBe(
      `${tb.hosts[1]!.address} cpu=1 schedule=no\n${tb.hosts[2]!.address} cpu=1\n`,
    );
  });

  it('refuses hosts that are not its own, so no traffic leaves the testbed', async () => {
    await expect(tb.ssh({ name: 'x', address: '10.0.0.1' }, 'true')).rejects.toThrow(
      /is not a host of the testbed/,
    );
    expect(() =>
      tb.writeBootSchema('x', { hosts: [{ name: 'x', address: '192.168.0.1' }] }),
    ).toThrow(TestbedError);
  });

  it('an ssh command that outlives timeoutMs is killed and rejected, naming the host', async () => {
    await expect(tb.ssh(tb.hosts[2]!, 'sleep 4', { timeoutMs: 1000 })).rejects.toThrow(
      /ssh to h3 .* did not finish within 1000 ms/,
    );
  });

  it('reports its status from the PidFiles', () => {
    const st = testbedStatus(tb.dir);
    expect(st.owner?.pid).toBe(process.pid);
    expect(st.hosts.map((h) => [h.name, h.address, h.running])).toEqual(
      tb.hosts.map((h) => [h.name, h.address, true]),
    );
    for (const h of st.hosts) expect(alive(h.pid!)).toBe(true);
  });
});

describe.skipIf(!avail.ok)('a host that refuses the key', () => {
  it('rejects the login with Permission denied while the others accept it', async () => {
    const tb = await start({ hosts: 2, rejectKeyFor: [1] });
    const ok = await tb.ssh(tb.hosts[0]!, 'true');
    expect(ok.code, ok.stderr).toBe(0);
    const refused = await tb.ssh(tb.hosts[1]!, 'echo should-not-run');
    expect(refused.code).not.toBe(0);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toMatch(/Permission denied/);
  });
});

describe.skipIf(!avail.ok)('addresses', () => {
  it('concurrent testbeds get disjoint addresses', async () => {
    const [a, b] = await Promise.all([start({ hosts: 2 }), start({ hosts: 2 })]);
    const all = [...a!.hosts, ...b!.hosts].map((h) => h.address);
    expect(new Set(all).size).toBe(4);
    for (const tb of [a!, b!]) {
      for (const h of tb.hosts) {
        const r = await tb.ssh(h, 'echo $SSH_CONNECTION');
        expect(r.stdout.split(' ')[2]).toBe(h.address);
      }
    }
  });

  it('an explicit firstAddress that is taken fails loudly, naming who holds it, and leaves nothing behind', async () => {
    const holder = await start({ hosts: 1 });
    const octet = Number(holder.hosts[0]!.address.split('.')[3]);
    const dir = join(holder.dir, '..', `ssi-testbed-collide-${process.pid}`);
    const err = await startTestbed({ hosts: 1, firstAddress: octet, dir }).catch((e) => e);
    expect(err).toBeInstanceOf(TestbedError);
    expect(err.failure).toBe('ADDRESS_IN_USE');
    expect(err.message).toContain(holder.hosts[0]!.address);
    expect(err.message).toContain(holder.dir);
    expect(existsSync(dir)).toBe(false);
  });
});

describe.skipIf(!avail.ok)('stop()', () => {
  it('kills every sshd of the testbed, sessions and what runs in them included, and removes the directory', async () => {
    const tb = await start({ hosts: 2 });
    const h = tb.hosts[0]!;
    // A session that would outlive a listener killed alone; its sleep is named uniquely (other
    // runs on this machine may be sleeping 300 s too).
    const nap = `sleep 300.${process.pid}${Date.now() % 1000}`;
    const session = spawn(
      tb.sshCommand[0]!,
      [...tb.sshCommand.slice(1), h.address, `echo up; exec ${nap}`],
      {
        stdio: ['ignore', 'pipe', 'ignore'],
      },
    );
    let out = '';
    session.stdout.on('data', (b) => {
      out += b;
    });
    const sessionClosed = new Promise((r) => session.on('close', r));
    try {
      await waitFor('the remote `sleep 300` to start', () => out.includes('up'));
      const listeners = testbedStatus(tb.dir).hosts.map((x) => x.pid!);
      expect(processesMentioning(tb.dir).length).toBeGreaterThanOrEqual(2);
      await waitFor('the remote sleep to be visible', () => processesMentioning(nap).length > 0);
      // The remote sleep, not our own ssh client (its command line names the sleep too, and it
      // exits only once it has seen the host go: it is awaited below).
      const sleepers = processesMentioning(nap)
        .map((p) => p.pid)
        .filter((pid) => pid !== session.pid);

      await tb.stop();

      expect(existsSync(tb.dir)).toBe(false);
      expect(processesMentioning(tb.dir)).toEqual([]);
      for (const pid of [...listeners, ...sleepers]) expect(alive(pid), `pid ${pid}`).toBe(false);
      await sessionClosed; // the client saw the host go
      await tb.stop(); // idempotent
    } finally {
      session.kill('SIGKILL');
    }
  });
});
