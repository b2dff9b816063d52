import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type CheckpointOutcome, parseEvent } from '../src/mpirun/checkpoint-protocol';
import { type CheckpointHandler, CheckpointRequestServer } from '../src/mpirun/checkpoint-requests';
import {
  checkpointDir,
  checkpointSocketPath,
  ensureCheckpointDir,
  jobAliasPath,
} from '../src/mpirun/checkpoint-socket';
import { runCli, waitChild, waitFor } from '../src/testing';

/**
 * mpirun's checkpoint request listener with a fake handler in this process, a real Unix socket,
 * and real `lamcheckpoint` processes (the built command). Only this test's own pid / job id names
 * are used, so other jobs of the same user on the machine are never touched.
 */
// A private TMPDIR for the whole file: the stale sockets and aliases it stages must not be swept
// by another mpirun of this user starting meanwhile (and it never touches theirs).
// Made in a hook, not when the file loads: a run filtered with -t that skips every test here
// runs no hook, and would leave the directory behind.
let fileTmp = '';
beforeAll(() => {
  fileTmp = mkdtempSync(join(tmpdir(), 'ssi-lamcheckpoint-test-'));
  process.env.TMPDIR = fileTmp;
});
afterAll(() => rmSync(fileTmp, { recursive: true, force: true }));

let server: CheckpointRequestServer | undefined;
const children: ChildProcess[] = [];

afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
  await server?.close();
  server = undefined;
  for (const s of rawSockets.splice(0)) s.destroy();
});

const newJobId = () => `test-${process.pid}-${randomBytes(3).toString('hex')}`;

async function startServer(handler: CheckpointHandler, jobId = newJobId()) {
  server = await CheckpointRequestServer.start({ pid: process.pid, jobId, handler });
  return jobId;
}

const lamcheckpoint = (args: string[]) =>
  runCli('lamcheckpoint', args, process.env, { timeoutMs: 30_000 });
const done = (series: number): CheckpointOutcome => ({
  ok: true,
  series,
  ms: 42,
  bytes: 4096,
  dir: `/ckpt/series-${series}`,
});
/** `p`, or a loud failure naming `what` after `ms`. */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Raw clients keep their side open (see rawClient) until the test ends. */
const rawSockets: Socket[] = [];

/**
 * Sends raw bytes as a client and collects what the server answers until the server ends its
 * side. The client never ends its own side (half-open), as a careless client would: the server
 * must still let go of the connection.
 */
function rawClient(bytes: string, end = false): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ path: checkpointSocketPath(process.pid), allowHalfOpen: true });
    rawSockets.push(socket);
    let answer = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(
        new Error(`no answer to ${JSON.stringify(bytes.slice(0, 40))} within 15 s: ${answer}`),
      );
    }, 15_000);
    socket.on('connect', () => (end ? socket.end(bytes) : socket.write(bytes)));
    socket.on('data', (d) => {
      answer += d;
    });
    socket.on('end', () => {
      clearTimeout(timer);
      resolve(answer);
    });
    socket.on('error', reject);
  });
}

describe("lamcheckpoint against mpirun's request listener", () => {
  it('prints progress and the series written, by pid and by job id', async () => {
    let calls = 0;
    const jobId = await startServer(async (progress) => {
      calls++;
      progress('interrupting 2 ranks');
      progress('rank 0: 2048 bytes written');
      return done(calls);
    });
    const alias = jobAliasPath(jobId);
    expect(readFileSync(alias, 'utf8').trim()).toBe(String(process.pid));

    const byPid = await lamcheckpoint([String(process.pid)]);
    expect(byPid.stderr).toBe('');
    expect(byPid.stdout).toBe(
      `interrupting 2 ranks\nrank 0: 2048 bytes written\ncheckpoint series 1 of job ${jobId}: 4096 bytes in 42.0 ms → /ckpt/series-1\n`,
    );
    expect(byPid.code).toBe(0);

    const byJob = await lamcheckpoint([jobId, '--timeout', '20']);
    expect(byJob.stdout).toContain(`checkpoint series 2 of job ${jobId}`);
    expect(byJob.code).toBe(0);

    await server!.close();
    expect(existsSync(alias)).toBe(false);
    expect(existsSync(checkpointSocketPath(process.pid))).toBe(false);
  });

  it('-v prints where the time went (the phases of the outcome); without -v it does not', async () => {
    const phases = {
      prepareMs: 4.25,
      savedMs: 20.5,
      drainMs: 3,
      saveMs: 15.75,
      drainSaveMs: 18.75,
      commitMs: 9,
    };
    await startServer(async () => ({ ...done(1), phases }));
    const verbose = await lamcheckpoint([String(process.pid), '-v']);
    expect(verbose.code).toBe(0);
    expect(verbose.stdout).toContain(
      'phases: prepare 4.3 ms, drain+save 20.5 ms (slowest rank: drain 3.0 + save 15.8, together 18.8), commit 9.0 ms\n',
    );
    const quiet = await lamcheckpoint([String(process.pid)]);
    expect(quiet.code).toBe(0);
    expect(quiet.stdout).not.toContain('phases:');
  });

  it('a done line whose phases are malformed is not an answer', () => {
    const line = { event: 'done', job: 'j', series: 1, ms: 2, bytes: 3, dir: '/d' };
    expect(parseEvent(JSON.stringify(line))).toEqual(line);
    const phases = { prepareMs: 1, savedMs: 2, drainMs: 3, saveMs: 4, drainSaveMs: 5, commitMs: 6 };
    expect(parseEvent(JSON.stringify({ ...line, phases }))).toEqual({ ...line, phases });
    const { commitMs: _, ...partial } = phases;
    expect(parseEvent(JSON.stringify({ ...line, phases: partial }))).toBeUndefined();
  });

  it('prints the refusal reason and exits 1', async () => {
    await startServer(async () => ({
      ok: false,
      reason: 'the rpi `tcp` cannot checkpoint: run with `--ssi rpi crtcp`',
    }));
    const r = await lamcheckpoint([String(process.pid)]);
    expect(r.stderr).toBe(
      'lamcheckpoint: checkpoint refused: the rpi `tcp` cannot checkpoint: run with `--ssi rpi crtcp`\n',
    );
    expect(r.code).toBe(1);
  });

  it('turns a handler that throws into a refusal, and keeps serving', async () => {
    let fail = true;
    await startServer(async () => {
      if (fail) throw new Error('rank 2 went away');
      return done(7);
    });
    const r = await lamcheckpoint([String(process.pid)]);
    expect(r.stderr).toContain('checkpoint refused: checkpoint failed: rank 2 went away');
    expect(r.code).toBe(1);
    fail = false;
    expect((await lamcheckpoint([String(process.pid)])).code).toBe(0);
  });

  it('streams the progress of a slow checkpoint, and gives up at --timeout', async () => {
    await startServer(async (progress) => {
      for (let rank = 0; rank < 4; rank++) {
        await sleep(300);
        progress(`rank ${rank} drained`);
      }
      return done(1);
    });
    const child = spawn(process.execPath, [cliPath(), String(process.pid)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let seen = '';
    child.stdout!.on('data', (d) => {
      seen += d;
    });
    // Progress arrives while the checkpoint still runs, not all at the end.
    await waitFor('the first progress line', () => seen.includes('rank 0 drained'), 10_000);
    expect(seen).not.toContain('checkpoint series');
    const r = await waitChild(child, 'lamcheckpoint (slow handler)', 30_000);
    expect(seen + r.stdout).toMatch(
      /rank 0 drained\nrank 1 drained\nrank 2 drained\nrank 3 drained\ncheckpoint series 1 of job/,
    );
    expect(r.code).toBe(0);

    const impatient = await lamcheckpoint([String(process.pid), '--timeout', '0.5']);
    expect(impatient.stderr).toBe(
      `lamcheckpoint: mpirun ${process.pid} did not finish the checkpoint within 0.5 s\n`,
    );
    expect(impatient.code).toBe(1);
  });

  it("gives two concurrent clients each the handler's own answer", async () => {
    // The handler decides: the first request runs until the second has arrived (so the server
    // must not serialize them), the second is refused while the first runs.
    let running = false;
    let secondArrived!: () => void;
    const second = new Promise<void>((r) => {
      secondArrived = r;
    });
    await startServer(async (progress) => {
      if (running) {
        secondArrived();
        return { ok: false, reason: 'a checkpoint of this job is already running (series 5)' };
      }
      running = true;
      progress('series 5 started');
      await second;
      running = false;
      return done(5);
    });
    const [a, b] = await Promise.all([
      lamcheckpoint([String(process.pid)]),
      sleep(200).then(() => lamcheckpoint([String(process.pid)])),
    ]);
    expect(a.stdout).toContain('series 5 started\ncheckpoint series 5 of job');
    expect(a.code).toBe(0);
    expect(b.stderr).toContain('checkpoint refused: a checkpoint of this job is already running');
    expect(b.code).toBe(1);
  });
});

describe('mpirun ending', () => {
  it('answers a client still waiting when the listener closes', async () => {
    let started!: () => void;
    const running = new Promise<void>((r) => {
      started = r;
    });
    await startServer(() => {
      started();
      return new Promise<CheckpointOutcome>(() => {}); // a checkpoint that never finishes
    });
    const child = spawn(process.execPath, [cliPath(), String(process.pid)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    const ran = waitChild(child, 'lamcheckpoint while mpirun ends', 30_000);
    await within(running, 15_000, 'the handler to be called');
    await within(server!.close(), 15_000, 'the listener to close with a client waiting');
    const r = await ran;
    expect(r.stderr).toBe('lamcheckpoint: checkpoint refused: mpirun is ending\n');
    expect(r.code).toBe(1);
  });
});

describe('lamcheckpoint when nobody listens', () => {
  it('says so for a dead mpirun, removes its stale socket, and a new server replaces one', async () => {
    // A process that listens on the checkpoint socket of its own pid and is killed: the socket
    // file stays behind, as after a crashed mpirun.
    const deadPid = await leaveStaleSocket();
    const path = checkpointSocketPath(deadPid);
    expect(existsSync(path)).toBe(true);

    const r = await lamcheckpoint([String(deadPid)]);
    expect(r.stderr).toBe(
      `lamcheckpoint: no mpirun with pid/job ${deadPid} accepts checkpoint requests here (was it started with --ssi cr <module>?)\n`,
    );
    expect(r.code).toBe(1);
    expect(existsSync(path)).toBe(false); // the dead mpirun's socket is cleaned up

    // A stale socket under the pid a server starts with is replaced, not an error.
    await leaveStaleSocket(checkpointSocketPath(process.pid));
    await startServer(async () => done(1));
    expect((await lamcheckpoint([String(process.pid)])).code).toBe(0);
  });

  it('says so for a job id whose mpirun is gone or never existed', async () => {
    const jobId = newJobId();
    ensureCheckpointDir(); // the last listener to close removed it
    writeFileSync(jobAliasPath(jobId), '999999999\n'); // an alias left by a crashed mpirun
    try {
      const r = await lamcheckpoint([jobId]);
      expect(r.stderr).toContain(
        `no mpirun with pid/job ${jobId} accepts checkpoint requests here`,
      );
      expect(r.code).toBe(1);
    } finally {
      rmSync(jobAliasPath(jobId), { force: true });
    }
    const unknown = await lamcheckpoint(['no-such-job-xyz']);
    expect(unknown.stderr).toContain('no mpirun with pid/job no-such-job-xyz accepts');
    expect(unknown.code).toBe(1);
  });
});

describe('what dead mpiruns left', () => {
  it('is swept when a listener starts: their sockets and aliases go, a live one stays', async () => {
    const deadPid = await leaveStaleSocket();
    const deadAlias = jobAliasPath(newJobId());
    writeFileSync(deadAlias, `${deadPid}\n`);
    const liveAlias = jobAliasPath(newJobId());
    writeFileSync(liveAlias, `${process.pid}\n`);
    try {
      await startServer(async () => done(1));
      expect(existsSync(checkpointSocketPath(deadPid)), 'dead socket').toBe(false);
      expect(existsSync(deadAlias), 'dead alias').toBe(false);
      expect(existsSync(liveAlias), 'live alias').toBe(true);
      expect(existsSync(server!.path), 'own socket').toBe(true);
    } finally {
      rmSync(liveAlias, { force: true });
    }
  });
});

describe('bad input', () => {
  it('answers malformed requests with what was expected, and keeps serving', async () => {
    await startServer(async () => done(3));
    const notJson = await rawClient('hello\n');
    expect(JSON.parse(notJson)).toEqual({
      event: 'refused',
      reason:
        'expected {"op":"checkpoint"} or {"op":"preempt"} and a newline, got "hello" (not JSON)',
    });
    const wrongOp = JSON.parse(await rawClient('{"op":"restart"}\n'));
    expect(wrongOp.reason).toBe(
      'expected {"op":"checkpoint"} or {"op":"preempt"} and a newline, got "{\\"op\\":\\"restart\\"}"',
    );
    const huge = JSON.parse(await rawClient('x'.repeat(10_000)));
    expect(huge.reason).toMatch(/^request longer than 4096 bytes/);
    // A request without newline, the client ending its side after it, is still answered.
    const ended = JSON.parse((await rawClient('{"op":"checkpoint"}', true)).trim());
    expect(ended).toMatchObject({ event: 'done', series: 3 });
    expect((await lamcheckpoint([String(process.pid)])).code).toBe(0);
    // The raw clients still hold their sides open; the server has let go of every connection.
    await within(server!.close(), 10_000, 'the listener to close while raw clients stay open');
  });

  it('--preempt sends the preempt op and prints the series and the lamrestart command', async () => {
    const ops: string[] = [];
    await startServer(async (progress, op) => {
      ops.push(op);
      progress('drain notice sent');
      return { ...done(4), dir: '/ckpt/job-a' };
    });
    const r = await lamcheckpoint([String(process.pid), '--preempt']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('drain notice sent\n');
    expect(r.stdout).toMatch(
      /job \S+ preempted: it stops now \(mpirun exits 75\); restart it with: lamrestart \/ckpt\/job-a\n$/,
    );
    const plain = await lamcheckpoint([String(process.pid)]);
    expect(plain.stdout).not.toContain('preempted');
    expect(ops).toEqual(['preempt', 'checkpoint']);
  });

  it('--preempt to an mpirun of a release without it: a refusal saying so', async () => {
    // What an older mpirun answers to {"op":"preempt"} (its parseRequest knew only checkpoint).
    await startServer(async (_progress, op) => ({
      ok: false,
      reason: `expected {"op":"checkpoint"} and a newline, got ${JSON.stringify(JSON.stringify({ op }))}`,
    }));
    const r = await lamcheckpoint([String(process.pid), '--preempt']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /^lamcheckpoint: checkpoint refused: mpirun \d+ is of a release without --preempt \(it answered: expected \{"op":"checkpoint"\} and a newline, got .*\); use lamcheckpoint without --preempt, then stop the job\n$/,
    );
  });

  it('rejects bad arguments with usage (exit 2)', async () => {
    const none = await lamcheckpoint([]);
    expect(none.stderr).toMatch(
      /^lamcheckpoint: which job\? give mpirun's pid or the job id\nusage:/,
    );
    expect(none.code).toBe(2);
    const badTimeout = await lamcheckpoint(['123', '--timeout', 'soon']);
    expect(badTimeout.stderr).toContain('--timeout needs a number of seconds > 0 (got soon)');
    expect(badTimeout.code).toBe(2);
    const two = await lamcheckpoint(['123', '456']);
    expect(two.stderr).toContain('unexpected argument 456');
    expect(two.code).toBe(2);
    const option = await lamcheckpoint(['--frobnicate']);
    expect(option.stderr).toContain('unknown option --frobnicate');
    expect(option.code).toBe(2);
    const path = await lamcheckpoint(['../etc']); // neither a pid nor a job id
    expect(path.stderr).toContain('no mpirun with pid/job ../etc accepts checkpoint requests');
    expect(path.code).toBe(1);
  });
});

/**
 * Starts a process listening on a checkpoint socket, kills it with SIGKILL so the socket file
 * stays (as after a crashed mpirun) and returns its dead pid. The socket is `at`, or else the one
 * named after the process's own pid.
 */
async function leaveStaleSocket(at?: string): Promise<number> {
  const dir = ensureCheckpointDir(); // the last listener to close removed it
  const where = at
    ? JSON.stringify(at)
    : `${JSON.stringify(dir)} + '/mpirun-' + process.pid + '.sock'`;
  const child = spawn(process.execPath, ['-e', `require('net').createServer().listen(${where})`], {
    stdio: 'ignore',
  });
  children.push(child);
  const path = at ?? checkpointSocketPath(child.pid!);
  await waitFor(`a socket at ${path}`, () => existsSync(path), 10_000);
  child.kill('SIGKILL');
  await waitChild(child, 'the listener left to die', 10_000);
  return child.pid!;
}

function cliPath(): string {
  return new URL('../dist/bin/lamcheckpoint.js', import.meta.url).pathname;
}

describe('the listener directory', () => {
  it('is removed when the last listener closes, and kept while another one listens', async () => {
    const privateTmp = mkdtempSync(join(tmpdir(), 'ssi-cr-dir-'));
    const saved = process.env.TMPDIR;
    process.env.TMPDIR = privateTmp; // os.tmpdir() reads it: this test owns the whole tree
    try {
      const done = async () => ({ ok: false as const, reason: 'test' });
      const a = await CheckpointRequestServer.start({
        pid: 1_000_001,
        jobId: newJobId(),
        handler: done,
      });
      const b = await CheckpointRequestServer.start({
        pid: 1_000_002,
        jobId: newJobId(),
        handler: done,
      });
      await a.close();
      expect(existsSync(checkpointDir()), 'b still listens there').toBe(true);
      await b.close();
      expect(existsSync(dirname(checkpointDir())), 'ssi-<user> removed').toBe(false);
    } finally {
      if (saved === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = saved;
      rmSync(privateTmp, { recursive: true, force: true });
    }
  });
});
