import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestbed, type Testbed, testbedAvailable } from '@ssi/testbed';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PBSDSH, waitChild } from './helpers';

// The stand-in pbsdsh the tm module is tested with must itself behave like pbsdsh.
const avail = testbedAvailable();

function run(args: string[], env: Record<string, string>, timeoutMs = 30_000) {
  const child = spawn(PBSDSH, args, {
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child.stdin.end('this must not reach the task\n');
  return waitChild(child, `pbsdsh ${args.join(' ')}`, timeoutMs);
}

const pgrep = (pattern: string) => {
  try {
    return execFileSync('pgrep', ['-f', pattern], { encoding: 'utf8' }).trim();
  } catch {
    return '';
  }
};

describe('availability', () => {
  it('the testbed can run here (skipped with the reason when not, except in CI)', (ctx) => {
    if (!avail.ok) {
      if (process.env.CI || process.env.SSI_TESTBED_REQUIRED === '1')
        throw new Error(`the testbed cannot run on this CI machine: ${avail.reason}`);
      ctx.skip(avail.reason);
    }
    expect(avail).toEqual({ ok: true });
  });
});

describe.skipIf(!avail.ok)('the stand-in pbsdsh', () => {
  let tb: Testbed;
  let dir: string;
  let env: Record<string, string>;
  beforeAll(async () => {
    tb = await startTestbed({ hosts: 2 });
    dir = mkdtempSync(join(tmpdir(), 'ssi-pbsdsh-'));
    const nodefile = join(dir, 'nodefile');
    const [a, b] = tb.hosts.map((h) => h.address);
    writeFileSync(nodefile, `${a}\n${a}\n${b}\n`);
    env = {
      PBS_ENVIRONMENT: 'PBS_BATCH',
      PBS_JOBID: '42.pbs-standin',
      PBS_NODEFILE: nodefile,
      SSI_PBSDSH_SSH: tb.sshCommand.join(' '),
    };
  });
  afterAll(async () => {
    await tb?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('runs the program on the named host with the job environment and no stdin', async () => {
    const h = tb.hosts[1]!;
    const r = await run(
      [
        '-h',
        h.address,
        '/bin/sh',
        '-c',
        'echo "$SSH_CONNECTION|$PBS_JOBID|$PBS_NODENUM|$PBS_VNODENUM"; cat',
      ],
      env,
    );
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const [conn, job, node, vnode] = r.stdout.trim().split('|');
    expect(conn!.split(' ')[2]).toBe(h.address);
    expect([job, node, vnode]).toEqual(['42.pbs-standin', '1', '2']);
  });

  it("-n picks the n-th node of the job, and the exit status is the task's", async () => {
    const r = await run(['-n', '0', '/bin/sh', '-c', 'echo $SSH_CONNECTION; exit 7'], env);
    expect(r.code).toBe(7);
    expect(r.stdout.split(' ')[2]).toBe(tb.hosts[0]!.address);
  });

  it('refuses hosts outside the job, relative programs, and running outside a job', async () => {
    const outside = await run(['-h', '127.0.0.254', '/bin/true'], env);
    expect(outside.code).toBe(1);
    expect(outside.stderr).toMatch(/Host \(127\.0\.0\.254\) not found in nodelist of job 42/);
    const relative = await run(['-h', tb.hosts[0]!.address, 'true'], env);
    expect(relative.code).toBe(1);
    expect(relative.stderr).toMatch(/true is not an absolute path/);
    const nojob = await run(['-h', tb.hosts[0]!.address, '/bin/true'], {
      PBS_JOBID: '',
      PBS_NODEFILE: '',
      SSI_PBSDSH_SSH: env.SSI_PBSDSH_SSH!,
    });
    expect(nojob.code).toBe(1);
    expect(nojob.stderr).toMatch(/tm_init failed.*not inside a PBS job/);
  });

  it("delivers SIGTERM to the task's process group on its host and exits 143", async () => {
    // A command line no other process on the machine has (pgrep below sees everybody's).
    const tag = `sleep ${3000 + (process.pid % 1000)}.${process.pid}${Date.now() % 100_000}`;
    const child = spawn(PBSDSH, ['-h', tb.hosts[1]!.address, '/bin/sh', '-c', `${tag} & ${tag}`], {
      env: { ...process.env, ...env },
      stdio: 'ignore',
    });
    // Only the two sleeps themselves (pbsdsh's and ssh's command lines contain the tag too, and
    // counting them could send SIGTERM before pbsdsh is up).
    const tasks = `^${tag}$`;
    const deadline = Date.now() + 15_000;
    while (pgrep(tasks).split('\n').filter(Boolean).length < 2) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for the two "${tag}" tasks`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const exited = new Promise<number | null>((resolve) =>
      child.on('exit', (code) => resolve(code)),
    );
    child.kill('SIGTERM');
    const code = await Promise.race([
      exited,
      new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error('pbsdsh did not exit within 15 s of SIGTERM')), 15_000),
      ),
    ]);
    expect(code).toBe(143);
    expect(pgrep(tasks)).toBe('');
  });
});
