import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { killStrayTestbeds, testbedAvailable, testbedStatus } from '../src/index';
import { alive, PKG, processesMentioning, runTs, waitFor } from './helpers';

const avail = testbedAvailable();
const dirs = new Set<string>();

afterAll(async () => {
  for (const dir of dirs) if (existsSync(dir)) await killStrayTestbeds({ dir });
});

interface Owned {
  dir: string;
  pids: number[];
}

/** Starts the owner fixture in `mode` and resolves once it printed its testbed. */
function owner(mode: 'wait' | 'exit' | 'throw') {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(PKG, 'test/fixtures/owner.ts'), mode],
    {
      cwd: PKG,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  let err = '';
  child.stderr.on('data', (b) => {
    err += b;
  });
  const closed = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
    child.on('close', (code, signal) => r({ code, signal })),
  );
  const ready = new Promise<Owned>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`owner fixture (${mode}) printed no testbed within 30 s; stderr: ${err}`));
    }, 30_000);
    child.stdout.on('data', (b) => {
      out += b;
      const line = out.split('\n')[0];
      if (out.includes('\n') && line) {
        clearTimeout(timer);
        const { dir } = JSON.parse(line) as { dir: string };
        dirs.add(dir);
        resolve({ dir, pids: testbedStatus(dir).hosts.map((h) => h.pid!) });
      }
    });
    child.on('close', () => {
      clearTimeout(timer);
      reject(
        new Error(`owner fixture (${mode}) ended before printing its testbed; stderr: ${err}`),
      );
    });
  });
  return { child, ready, closed };
}

async function expectGone(owned: Owned): Promise<void> {
  await waitFor(`the sshds of ${owned.dir} to be gone`, () => owned.pids.every((p) => !alive(p)));
  expect(processesMentioning(owned.dir)).toEqual([]);
  expect(existsSync(owned.dir)).toBe(false);
}

describe.skipIf(!avail.ok)('an owning process that ends stops its testbed', () => {
  it('on SIGTERM (and then dies by that signal)', async () => {
    const o = owner('wait');
    const owned = await o.ready;
    expect(owned.pids.every(alive)).toBe(true);
    o.child.kill('SIGTERM');
    expect(await o.closed).toEqual({ code: null, signal: 'SIGTERM' });
    await expectGone(owned);
  });

  it('on SIGINT', async () => {
    const o = owner('wait');
    const owned = await o.ready;
    o.child.kill('SIGINT');
    expect((await o.closed).signal).toBe('SIGINT');
    await expectGone(owned);
  });

  it('on process.exit()', async () => {
    const o = owner('exit');
    const owned = await o.ready;
    expect((await o.closed).code).toBe(3);
    await expectGone(owned);
  });

  it('on an uncaught exception', async () => {
    const o = owner('throw');
    const owned = await o.ready;
    expect((await o.closed).code).toBe(1);
    await expectGone(owned);
  });
});

describe.skipIf(!avail.ok)('killStrayTestbeds()', () => {
  it('stops the testbed of a SIGKILLed owner and removes its directory', async () => {
    const o = owner('wait');
    const owned = await o.ready;
    o.child.kill('SIGKILL');
    await o.closed;
    // SIGKILL cannot be caught: the sshds are still there …
    expect(owned.pids.every(alive)).toBe(true);
    expect(existsSync(owned.dir)).toBe(true);
    // … until someone cleans up.
    const report = await killStrayTestbeds();
    expect(report.dirs).toContain(owned.dir);
    expect(report.survivors).toEqual([]);
    await expectGone(owned);
  });

  it('leaves testbeds alone whose owner is alive', async () => {
    const o = owner('wait');
    try {
      const owned = await o.ready;
      const report = await killStrayTestbeds();
      expect(report.dirs).not.toContain(owned.dir);
      expect(owned.pids.every(alive)).toBe(true);
      o.child.kill('SIGTERM');
      await o.closed;
      await expectGone(owned);
    } finally {
      o.child.kill('SIGKILL');
    }
  });
});

describe.skipIf(!avail.ok)('the ssi-testbed CLI', () => {
  it('up leaves the hosts running after it exits; status checks them; clean leaves them; down stops them', async () => {
    const dir = join(tmpdir(), `ssi-testbed-cli-${process.pid}`);
    dirs.add(dir);
    const up = await runTs('src/cli.ts', ['up', '2', '--dir', dir, '--json']);
    expect(up.code, up.stderr).toBe(0);
    const info = JSON.parse(up.stdout) as {
      dir: string;
      hosts: { address: string }[];
      schema: string;
    };
    expect(info.dir).toBe(dir);
    expect(info.schema).toBe(join(dir, 'hostfile'));
    expect(existsSync(info.schema)).toBe(true);
    const pids = testbedStatus(dir).hosts.map((h) => h.pid!);
    expect(pids.every(alive)).toBe(true);

    const status = await runTs('src/cli.ts', ['status', '--dir', dir, '--check']);
    expect(status.code, status.stdout + status.stderr).toBe(0);
    expect(status.stdout.match(/login ok/g)).toHaveLength(2);

    // `up` testbeds are meant to keep running: not strays
    expect((await killStrayTestbeds()).dirs).not.toContain(dir);

    const down = await runTs('src/cli.ts', ['down', '--dir', dir]);
    expect(down.code, down.stderr).toBe(0);
    await expectGone({ dir, pids });

    const gone = await runTs('src/cli.ts', ['status', '--dir', dir]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toMatch(/is not a testbed directory/);
  });

  it('prints usage for a bad command line', async () => {
    const r = await runTs('src/cli.ts', ['up']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/usage:/);
  });
});
