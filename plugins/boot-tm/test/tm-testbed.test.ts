import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LamClient, readSessionInfo, sessionDirFor, wipeSession } from '@ssi/lam';
import { startTestbed, type Testbed, testbedAvailable } from '@ssi/testbed';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  envOf,
  jobProcesses,
  MPI_JOB,
  PBSDSH,
  runCli,
  startCli,
  waitChild,
  waitFor,
} from './helpers';

// The tm module in a reproduced PBS job: PBS_* variables, a node file naming test hosts (one
// sshd per 127.0.0.N), and the stand-in pbsdsh (test/fixtures/pbsdsh) that starts each task on
// its test host through ssh and forwards SIGTERM to it. Not a real PBS server (see README).

const available = testbedAvailable();
const SUFFIX = `tm${process.pid}`;
const work = mkdtempSync(join(tmpdir(), 'ssi-tm-test-'));
const bin = join(work, 'bin');
const spool = join(work, 'spool');
let tb: Testbed;
let jobs = 0;
let job = '';

const addr = (i: number) => tb.hosts[i]!.address;

beforeAll(async () => {
  if (!available.ok) return;
  mkdirSync(bin);
  symlinkSync(PBSDSH, join(bin, 'pbsdsh'));
  // the fourth test host's sshd refuses our key: pbsdsh fails on that node
  tb = await startTestbed({ hosts: 4, rejectKeyFor: [3] });
});

afterAll(async () => {
  await tb?.stop();
  rmSync(work, { recursive: true, force: true });
});

afterEach(async () => {
  if (!tb) return;
  // whatever a failed test left: the job's processes, then every session of this suffix
  for (const p of jobProcesses(job)) {
    try {
      process.kill(p.pid, 'SIGKILL');
    } catch {}
  }
  for (const h of tb.hosts) await wipeSession(h.address, SUFFIX, 2000);
});

/** A new PBS job whose node file has these lines; returns the job's environment. */
function pbsJob(lines: string[] | null, extra: Record<string, string> = {}) {
  job = `${process.pid}${++jobs}.pbs-standin`;
  const nodefile = join(work, `aux-${jobs}`);
  if (lines) writeFileSync(nodefile, lines.map((l) => `${l}\n`).join(''));
  return {
    PATH: `${bin}:${process.env.PATH ?? ''}`,
    HOME: process.env.HOME ?? '/',
    PBS_ENVIRONMENT: 'PBS_BATCH',
    PBS_JOBID: job,
    PBS_NODEFILE: nodefile,
    PBS_O_WORKDIR: work,
    SSI_PBSDSH_SSH: tb.sshCommand.join(' '),
    LAM_MPI_SESSION_HOST: addr(0),
    LAM_MPI_SESSION_SUFFIX: SUFFIX,
    LAM_MPI_SSI_boot_tm_spool_dir: spool,
    LAM_MPI_SSI_boot_base_timeout: '20',
    ...extra,
  };
}

const sessionDirs = () =>
  readdirSync(tmpdir()).filter((n) => n.startsWith('ssi-') && n.endsWith(`-${SUFFIX}`));

/** Nothing of the job is left: no process carrying its PBS_JOBID, no session, no spool file. */
async function expectNothingLeft() {
  await waitFor(
    `every process of PBS job ${job} to end`,
    () => jobProcesses(job).length === 0,
    20_000,
    () => JSON.stringify(jobProcesses(job)),
  );
  expect(sessionDirs()).toEqual([]);
  expect(existsSync(spool) ? readdirSync(spool) : []).toEqual([]);
}

describe('availability', () => {
  it('the testbed can run here (skipped with the reason when not, except in CI)', (ctx) => {
    if (!available.ok) {
      if (process.env.CI || process.env.SSI_TESTBED_REQUIRED === '1')
        throw new Error(`the testbed cannot run on this CI machine: ${available.reason}`);
      ctx.skip(available.reason);
    }
    expect(available).toEqual({ ok: true });
  });
});

describe.skipIf(!available.ok)(
  `the tm module in a stand-in PBS job (${available.ok ? 'real sshd' : available.reason})`,
  () => {
    it('boots one lamd per node of the node file through pbsdsh; an MPI job runs; lamhalt ends every task', async () => {
      // h1 h2 h1 h3 h2 h1: three physical nodes, 3 + 2 + 1 virtual CPUs, in file order
      const env = pbsJob([addr(0), addr(1), addr(0), addr(2), addr(1), addr(0)]);
      const schema = join(work, 'ignored-hostfile');
      writeFileSync(schema, `${addr(3)}\n`);
      const boot = await runCli('lamboot', ['-v', schema], env);
      expect(boot.stderr).toContain(
        `lamboot: warning: the boot schema ${schema} is ignored: the tm boot module boots the nodes of PBS job ${job} from the PBS node file`,
      );
      expectOk(boot);
      expect(boot.stderr).toMatch(/universe of 3 node\(s\) booted with the tm boot module/);

      const c = await LamClient.connect({ env });
      const universe = await c.universe();
      c.close();
      expect(universe.map((n) => [n.id, n.name, n.cpus, n.origin])).toEqual([
        [0, addr(0), 3, true],
        [1, addr(1), 2, false],
        [2, addr(2), 1, false],
      ]);
      const secret = readFileSync(join(sessionDirFor(addr(0), SUFFIX), 'secret'), 'utf8').trim();
      for (const n of universe) {
        // a task of the job (pbsdsh gave it PBS_TASKNUM), started on its own test host
        expect(envOf(n.pid, 'PBS_JOBID')).toBe(job);
        expect(envOf(n.pid, 'PBS_TASKNUM')).toMatch(/^\d+$/);
        expect(envOf(n.pid, 'PBS_NODENUM')).toBe(String(n.id));
        expect(envOf(n.pid, 'SSH_CONNECTION')?.split(' ')[2]).toBe(n.address);
        expect(readFileSync(`/proc/${n.pid}/cmdline`, 'utf8')).not.toContain(secret);
        expect(readFileSync(`/proc/${n.pid}/environ`, 'utf8')).not.toContain(secret);
      }
      // the launchers stay: they are PBS's handle on the tasks
      const launchers = jobProcesses(job).filter((p) => p.cmdline.includes(`${bin}/pbsdsh`));
      expect(launchers).toHaveLength(3);
      // the boot configurations (they hold the secret) were read and deleted
      expect(readdirSync(spool)).toEqual([]);

      const run = await runCli('mpirun', ['-np', '4', MPI_JOB, 'ring'], env);
      expect(run.stderr).toBe('');
      expectOk(run);
      expect(run.stdout).toContain('ring: 0 1 2 3');

      const halt = await runCli('lamhalt', [], env);
      expectOk(halt);
      await expectNothingLeft();
    });

    it('lamgrow and lamshrink are refused under tm, and the universe stays as it was', async () => {
      const env = pbsJob([addr(0), addr(1)]);
      expectOk(await runCli('lamboot', [], env));
      const shrink = await runCli('lamshrink', ['n1'], env);
      expect(shrink.code).not.toBe(0);
      expect(shrink.stderr).toContain(
        `lamshrink is not supported in this universe: it was booted by the tm boot module inside PBS job ${job}, whose nodes PBS fixed when the job started`,
      );
      const grow = await runCli('lamgrow', [addr(2)], env);
      expect(grow.code).not.toBe(0);
      expect(grow.stderr).toContain(
        'lamgrow is not supported in this universe: it was booted by the tm boot module',
      );
      const nodes = await runCli('lamnodes', [], env);
      expect(nodes.stdout.trim().split('\n')).toHaveLength(2);
      expect(readSessionInfo(sessionDirFor(addr(1), SUFFIX))).toBeDefined();
      expectOk(await runCli('lamhalt', [], env));
      await expectNothingLeft();
    });

    it("the MOM's SIGTERM: every lamd stops the jobs it started and exits; nothing of the job survives", async () => {
      const env = pbsJob([addr(0), addr(1), addr(2)]);
      expectOk(await runCli('lamboot', [], env));
      const mpirun = startCli('mpirun', ['-np', '3', MPI_JOB, 'wait'], env);
      const ended = waitChild(mpirun, 'mpirun of the waiting job', 60_000);
      let out = '';
      mpirun.stdout!.on('data', (d) => {
        out += d;
      });
      await waitFor(
        'three ranks waiting',
        () => (out.match(/waiting \d+ \d+/g) ?? []).length === 3,
        30_000,
        () => `(mpirun printed: ${out})`,
      );
      const ranks = [...out.matchAll(/waiting (\d+) (\d+)/g)].map((m) => Number(m[2]));
      const lamds = (await universeOf(env)).map((n) => n.pid);
      for (const pid of [...ranks, ...lamds]) expect(envOf(pid, 'PBS_JOBID')).toBe(job);

      // the job is killed: PBS signals every task it knows of (here: through each pbsdsh)
      const launchers = jobProcesses(job).filter((p) => p.cmdline.includes(`${bin}/pbsdsh`));
      expect(launchers).toHaveLength(3);
      for (const l of launchers) process.kill(l.pid, 'SIGTERM');

      const r = await ended;
      expect(r.code).not.toBe(0);
      await expectNothingLeft();
      for (const pid of [...ranks, ...lamds]) expect(existsSync(`/proc/${pid}`)).toBe(false);
    });

    it('pbsdsh failing on one node: the error names the node and the cause, the nodes already started are taken down', async () => {
      // window 1: n0 and n1 are up before n2 is tried
      const env = pbsJob([addr(0), addr(1), addr(3)], {
        LAM_MPI_SSI_boot_base_linear_win_size: '1',
      });
      const boot = await runCli('lamboot', ['-v'], env);
      expect(boot.code).not.toBe(0);
      expect(boot.stderr).toContain(`n0 (${addr(0)}) joined`);
      expect(boot.stderr).toContain(`n1 (${addr(1)}) joined`);
      expect(boot.stderr).toMatch(
        new RegExp(
          `lamboot failed on n2 \\(${addr(3).replace(/\./g, '\\.')}\\): pbsdsh -h ${addr(3).replace(/\./g, '\\.')} ended \\(status 255\\) before the lamd on n2 .* called back: .*Permission denied`,
        ),
      );
      expect(boot.stderr).toContain('No lamd was left running.');
      await expectNothingLeft();

      // a node without a host behind it (nothing listens there): all launched at once
      const env2 = pbsJob([addr(0), '127.0.0.253', addr(1)]);
      const boot2 = await runCli('lamboot', [], env2);
      expect(boot2.code).not.toBe(0);
      expect(boot2.stderr).toMatch(
        /lamboot failed on n1 \(127\.0\.0\.253\): pbsdsh -h 127\.0\.0\.253 ended \(status 255\) .*Connection refused/,
      );
      await expectNothingLeft();
    });

    it('pbsdsh missing: a clear error before anything starts', async () => {
      const env = pbsJob([addr(0), addr(1)], { PATH: process.env.PATH ?? '' });
      const boot = await runCli('lamboot', [], env);
      expect(boot.code).not.toBe(0);
      expect(boot.stderr).toContain(
        'the PBS launcher "pbsdsh" (boot_tm_launcher) is not on PATH; inside a PBS job pbsdsh is there',
      );
      expect(boot.stderr).toContain('Nothing was started.');
      const notExec = join(work, 'not-a-program');
      writeFileSync(notExec, 'data\n');
      chmodSync(notExec, 0o644);
      const boot2 = await runCli('lamboot', ['--ssi', 'boot_tm_launcher', notExec], env);
      expect(boot2.code).not.toBe(0);
      expect(boot2.stderr).toContain(
        `the PBS launcher "${notExec}" (boot_tm_launcher) is not an executable file`,
      );
      await expectNothingLeft();
    });

    it('a node file that is missing, empty, unreadable or malformed: named, with what was expected', async () => {
      const missing = pbsJob(null);
      const r1 = await runCli('lamboot', [], missing);
      expect(r1.code).not.toBe(0);
      expect(r1.stderr).toContain(
        `the PBS node file ${missing.PBS_NODEFILE} (PBS_NODEFILE) does not exist; PBS creates it when the job starts`,
      );
      const empty = pbsJob([]);
      const r2 = await runCli('lamboot', [], empty);
      expect(r2.code).not.toBe(0);
      expect(r2.stderr).toContain(`the PBS node file ${empty.PBS_NODEFILE} is empty`);
      const dir = pbsJob(null);
      mkdirSync(dir.PBS_NODEFILE);
      const r3 = await runCli('lamboot', [], dir);
      expect(r3.code).not.toBe(0);
      expect(r3.stderr).toContain(
        `cannot read the PBS node file ${dir.PBS_NODEFILE} (PBS_NODEFILE): it is a directory`,
      );
      const bad = pbsJob([addr(0), `${addr(1)} np=2`]);
      const r4 = await runCli('lamboot', [], bad);
      expect(r4.code).not.toBe(0);
      expect(r4.stderr).toContain(
        `${bad.PBS_NODEFILE}:2: "${addr(1)} np=2" is not a host name; a PBS node file has one host name per line`,
      );
      // lamboot must run on a node of the job
      const elsewhere = pbsJob([addr(1), addr(2)]);
      const r5 = await runCli('lamboot', [], elsewhere);
      expect(r5.code).not.toBe(0);
      expect(r5.stderr).toContain(
        `this host ("${addr(0)}") is not in the boot schema the PBS node file`,
      );
      await expectNothingLeft();
    });

    it('declines outside a PBS job, saying why in -d output', async () => {
      const env = pbsJob([addr(0)]);
      const { PBS_JOBID: _j, PBS_NODEFILE: _n, ...outside } = env;
      const why =
        'not inside a PBS job: PBS_JOBID, PBS_NODEFILE are not set (PBS sets PBS_ENVIRONMENT, PBS_JOBID and PBS_NODEFILE in every job)';
      const asked = await runCli('lamboot', ['-d', '--ssi', 'boot', 'tm'], outside);
      expect(asked.code).not.toBe(0);
      expect(asked.stderr).toContain(`tm: declined: ${why}`);
      // without --ssi boot: rsh boots this host, and -d says why tm did not
      const other = await runCli('lamboot', ['-d', '--ssi', 'boot_tm_priority', '90'], outside);
      expectOk(other);
      expect(other.stderr).toContain(`[ssi boot] tm declined: ${why}`);
      expect(other.stderr).toContain('[ssi boot] selected boot module rsh');
      expectOk(await runCli('lamhalt', [], outside));
    });

    it('recon and wipe run through pbsdsh on every node and report each', async () => {
      const env = pbsJob([addr(0), addr(1), addr(3)]);
      const recon = await runCli('recon', [], env);
      expect(recon.code).not.toBe(0);
      const said = recon.stdout + recon.stderr;
      expect(said).toContain(`n0 (${addr(0)}): ok`);
      expect(said).toContain(`n1 (${addr(1)}): ok`);
      expect(said).toContain(
        `n2 (${addr(3)}): FAILED: recon on n2 (${addr(3)}) through pbsdsh failed (status 255): root@${addr(3)}: Permission denied (publickey).`,
      );
      const ok = pbsJob([addr(0), addr(1)]);
      expectOk(await runCli('lamboot', [], ok));
      const wipe = await runCli('wipe', [], ok);
      expectOk(wipe);
      await expectNothingLeft();
    });
  },
);

/** A command that must have succeeded; its output is in the failure message. */
function expectOk(r: { code: number | null; stdout: string; stderr: string }) {
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: expect.any(String) });
}

async function universeOf(env: Record<string, string>) {
  const c = await LamClient.connect({ env });
  try {
    return await c.universe();
  } finally {
    c.close();
  }
}
