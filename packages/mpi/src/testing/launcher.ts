import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import { hostname } from 'node:os';
import { ENV_PREFIX } from '@ssi/core';
import { type Binding, type BindPolicy, JobBinder, LAM_PARAMS } from '@ssi/lam';
import { parseControlUp } from '../control/control-protocol';
import { HubControl } from '../control/hub-control';
import { JOB_ENV } from '../job-runtime';
import { proofMatches, readFrames, rendezvousProof, writeFrame } from './frames';

/** What to run: N copies of one Node program, as `mpirun -np N node program args` would. */
export interface LaunchOptions {
  /** Number of processes. */
  np: number;
  /** The program (a JavaScript file Node can run). */
  program: string;
  args?: readonly string[];
  /** Node flags before the program (e.g. `["--import", "tsx"]`). */
  execArgv?: readonly string[];
  /** SSI parameters for every rank (`--ssi name value`), passed as `LAM_MPI_SSI_<name>`. */
  ssi?: Record<string, string | number | boolean>;
  /** Extra environment for every rank. */
  env?: Record<string, string>;
  /** Extra environment for one rank. */
  rankEnv?: (rank: number) => Record<string, string>;
  /**
   * Test hosts: one loopback address per node (e.g. `["127.0.0.2", "127.0.0.3"]`); ranks are
   * placed in blocks, as `mpirun C` does. Default: one node at 127.0.0.1.
   */
  nodes?: readonly string[];
  /**
   * Bind the ranks as mpirun does (`core`: a core each where this machine has enough free ones,
   * `planBinding` of @ssi/lam; default `none`). All ranks run on this machine, whatever `nodes`
   * says, so they are planned as one node.
   */
  bind?: BindPolicy;
  /**
   * With `bind`, a job of more ranks than this machine's CPUs: in blocks of consecutive ranks
   * per CPU when that puts at most this many on a CPU, else unbound (mpirun's
   * lam_bind_oversubscribed; default as mpirun's; 0: never).
   */
  bindOversubscribed?: number;
  /** Kill everything and fail after this long (default 60 s). */
  timeoutMs?: number;
  cwd?: string;
  /** Print rank output as it arrives (default: when `SSI_TEST_ECHO` is set). */
  echo?: boolean;
  /** What this job is, for messages. */
  label?: string;
  /**
   * The launcher's end of the job control channel, as `mpirun`'s hub offers it: called before
   * the ranks start, so handlers registered here see every message.
   */
  control?: (control: HubControl) => void;
}

/** How a job ended. */
export interface JobResult {
  /** Every rank finalized MPI and exited with code 0. */
  ok: boolean;
  /** Why not, in one paragraph (undefined when ok). */
  failure?: string;
  /** The first `abort` (MPI_Abort, ERRORS_ARE_FATAL, unhandled rejection, failed init). */
  abort?: { rank: number; code: number; message: string };
  exitCodes: (number | null)[];
  signals: (NodeJS.Signals | null)[];
  /** Whether each rank reported a clean MPI.finalize. */
  finalized: boolean[];
  /** All output, every line prefixed with `[rank] ` (stderr lines with `[rank!] `), in arrival order. */
  output: string;
  stdout: string[];
  stderr: string[];
  durationMs: number;
  /** Control messages the launcher dropped, and why (malformed, unknown type, failing handler). */
  controlWarnings: string[];
  /** What each rank got when `bind` asked for binding. */
  bindings?: Binding[];
}

/** A failed job for an assertion message: why, then the last 4000 characters of its output. */
export function explainJob(r: JobResult): string {
  return `${r.failure ?? ''}\n--- output ---\n${r.output.slice(-4000)}`;
}

const live = new Set<ChildProcess>();

/** One binder for every job this process launches: jobs at once never share a CPU. */
const binder = new JobBinder();

/** Kills every process any job of this test process started and that still runs. */
export function killAllJobs(): void {
  for (const child of live) child.kill('SIGKILL');
  live.clear();
}

/**
 * Starts `np` real Node processes running `program`, with the environment `mpirun` gives
 * (`SSI_JOB_ID`, `SSI_RANK`, `SSI_SIZE`, `SSI_NODE_ID`, `SSI_NODE_NAME`, `SSI_HOST_ADDR`,
 * `SSI_JOB_SECRET`, `LAM_MPI_SSI_*`) plus `SSI_TEST_RENDEZVOUS`: the address of a local TCP
 * rendezvous server that plays mpirun's part for `MPI.init` (GPS exchange, out-of-band messages,
 * abort). Forwards rank-prefixed output, kills every rank as soon as one fails, aborts or the
 * timeout expires. Never rejects for a failing job: inspect the result (or use `runJob`).
 */
export async function launchJob(options: LaunchOptions): Promise<JobResult> {
  const np = options.np;
  const nodes = options.nodes?.length ? options.nodes : ['127.0.0.1'];
  const timeoutMs = options.timeoutMs ?? 60_000;
  const echo = options.echo ?? !!process.env.SSI_TEST_ECHO;
  const label = options.label ?? `${options.program} ${(options.args ?? []).join(' ')}`.trim();
  const jobId = `test-${process.pid}-${randomBytes(4).toString('hex')}`;
  const secret = randomBytes(32);
  const started = Date.now();

  const result: JobResult = {
    ok: false,
    exitCodes: new Array(np).fill(null),
    signals: new Array(np).fill(null),
    finalized: new Array(np).fill(false),
    output: '',
    stdout: new Array(np).fill(''),
    stderr: new Array(np).fill(''),
    durationMs: 0,
    controlWarnings: [],
  };
  const outputLines: string[] = [];
  const children: ChildProcess[] = [];
  const sockets: (Socket | undefined)[] = new Array(np);
  const gathers = new Map<number, unknown[]>();
  const gatherCounts = new Map<number, number>();
  let failure: string | undefined;
  let exited = 0;

  let finish!: () => void;
  const done = new Promise<void>((resolve) => {
    finish = resolve;
  });

  const killAll = () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  };
  const fail = (why: string) => {
    if (failure === undefined) failure = why;
    killAll();
  };

  const control = new HubControl(
    np,
    (rank, msg) => {
      const s = sockets[rank];
      if (s) writeFrame(s, { t: 'ctl', m: msg });
    },
    (why) => {
      result.controlWarnings.push(why);
      if (echo) process.stderr.write(`[launcher] control: ${why}\n`);
    },
  );
  options.control?.(control);

  const server: Server = createServer((socket) => {
    socket.setNoDelay(true);
    let rank = -1;
    readFrames(socket, (m) => {
      if (rank < 0) {
        const r = m.rank as number;
        if (
          m.t !== 'hello' ||
          !Number.isInteger(r) ||
          r < 0 ||
          r >= np ||
          sockets[r] ||
          !proofMatches(rendezvousProof(secret, jobId, r), m.proof)
        ) {
          socket.destroy();
          return;
        }
        rank = r;
        sockets[r] = socket;
        writeFrame(socket, { t: 'welcome' });
        control.connected(r);
        return;
      }
      switch (m.t) {
        case 'gather': {
          const round = m.round as number;
          let values = gathers.get(round);
          if (!values) {
            values = new Array(np);
            gathers.set(round, values);
          }
          values[rank] = m.value;
          const n = (gatherCounts.get(round) ?? 0) + 1;
          gatherCounts.set(round, n);
          if (n === np) {
            gathers.delete(round);
            gatherCounts.delete(round);
            for (const s of sockets) if (s) writeFrame(s, { t: 'gathered', round, values });
          }
          break;
        }
        case 'oob': {
          const to = m.to as number;
          const dest = sockets[to];
          if (dest) writeFrame(dest, { t: 'oob', from: rank, tag: m.tag, value: m.value });
          else
            fail(`rank ${rank} sent an out-of-band message to rank ${to}, which is not connected`);
          break;
        }
        case 'abort':
          if (!result.abort) {
            result.abort = { rank, code: m.code as number, message: m.message as string };
            fail(`rank ${rank} aborted the job (code ${m.code}): ${m.message}`);
          }
          break;
        case 'ctl':
          try {
            const c = parseControlUp(m.m, np);
            if (c.rank !== rank)
              throw new Error(`control message for rank ${c.rank} from rank ${rank}`);
            control.receive(c);
          } catch (err) {
            result.controlWarnings.push((err as Error).message);
          }
          break;
        case 'fin':
          result.finalized[rank] = true;
          writeFrame(socket, { t: 'finack' });
          break;
      }
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      if (rank >= 0 && !result.finalized[rank] && !result.abort) {
        for (const s of sockets)
          if (s && s !== socket) writeFrame(s, { t: 'death', rank, reason: 'connection closed' });
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address() as { port: number };

  const timer = setTimeout(() => {
    const running = children
      .map((c, i) => (c.exitCode === null && c.signalCode === null ? i : -1))
      .filter((i) => i >= 0);
    fail(
      `timed out after ${timeoutMs} ms waiting for the job to end; ranks still running: ` +
        `${running.join(', ') || 'none'}; ranks that finalized: ` +
        `${result.finalized.flatMap((f, i) => (f ? [i] : [])).join(', ') || 'none'}`,
    );
  }, timeoutMs);

  const baseEnv: Record<string, string | undefined> = { ...process.env };
  for (const key of Object.keys(baseEnv)) {
    if (key.startsWith('SSI_') || key.startsWith(ENV_PREFIX)) delete baseEnv[key];
  }
  for (const [name, value] of Object.entries(options.ssi ?? {})) {
    baseEnv[ENV_PREFIX + name] = String(value);
  }
  const perNode = Math.ceil(np / nodes.length);

  for (let rank = 0; rank < np; rank++) {
    const nodeId = Math.min(Math.floor(rank / perNode), nodes.length - 1);
    const env: Record<string, string | undefined> = {
      ...baseEnv,
      ...options.env,
      [JOB_ENV.JOB_ID]: jobId,
      [JOB_ENV.RANK]: String(rank),
      [JOB_ENV.SIZE]: String(np),
      [JOB_ENV.NODE_ID]: String(nodeId),
      [JOB_ENV.NODE_NAME]: nodes.length > 1 ? `testhost${nodeId}` : hostname(),
      [JOB_ENV.HOST_ADDR]: nodes[nodeId],
      [JOB_ENV.MAX_NODE_RANKS]: String(Math.min(perNode, np)),
      [JOB_ENV.SECRET]: secret.toString('hex'),
      [JOB_ENV.TEST_RENDEZVOUS]: `127.0.0.1:${address.port}`,
      ...options.rankEnv?.(rank),
    };
    const bound = binder.bind(
      jobId,
      options.bind && {
        to: options.bind,
        slot: rank,
        of: np,
        oversubscribed:
          options.bindOversubscribed ?? (LAM_PARAMS.lam_bind_oversubscribed.default as number),
      },
      [process.execPath, ...(options.execArgv ?? []), options.program, ...(options.args ?? [])],
      { path: process.env.PATH ?? '', cwd: options.cwd ?? process.cwd() },
    );
    if (bound.binding) {
      result.bindings ??= [];
      result.bindings[rank] = bound.binding;
    }
    const [command, ...commandArgs] = bound.argv;
    const child = spawn(command!, commandArgs, {
      cwd: options.cwd,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    live.add(child);
    const forward = (stream: NodeJS.ReadableStream, err: boolean) => {
      let partial = '';
      stream.setEncoding('utf8');
      stream.on('data', (text: string) => {
        if (err) result.stderr[rank] += text;
        else result.stdout[rank] += text;
        const lines = (partial + text).split('\n');
        partial = lines.pop()!;
        for (const line of lines) {
          const out = `[${rank}${err ? '!' : ''}] ${line}`;
          outputLines.push(out);
          if (echo) process.stderr.write(`${out}\n`);
        }
      });
      stream.on('end', () => {
        if (partial) outputLines.push(`[${rank}${err ? '!' : ''}] ${partial}`);
      });
    };
    forward(child.stdout!, false);
    forward(child.stderr!, true);
    child.on('error', (err) => fail(`rank ${rank} could not start: ${err.message}`));
    child.on('exit', (code, signal) => {
      live.delete(child);
      result.exitCodes[rank] = code;
      result.signals[rank] = signal;
      if (failure === undefined) {
        if (code !== 0) {
          fail(`rank ${rank} exited with ${code !== null ? `code ${code}` : `signal ${signal}`}`);
        } else if (!result.finalized[rank]) {
          fail(`rank ${rank} exited (code 0) without calling MPI.finalize`);
        }
      }
    });
    child.on('close', () => {
      if (++exited === np) finish();
    });
  }

  await done;
  binder.jobEnded(jobId);
  clearTimeout(timer);
  for (const s of sockets) s?.destroy();
  server.close();
  result.output = outputLines.join('\n');
  result.durationMs = Date.now() - started;
  result.ok = failure === undefined;
  if (failure !== undefined) result.failure = `${label}: ${failure}`;
  return result;
}

/** Like `launchJob`, but rejects with the failure and the output's tail when the job fails. */
export async function runJob(options: LaunchOptions): Promise<JobResult> {
  const result = await launchJob(options);
  if (!result.ok) {
    const tail = result.output.split('\n').slice(-60).join('\n');
    throw new Error(`${result.failure}\n--- output (last 60 lines) ---\n${tail}`);
  }
  return result;
}
