import { connect, type Socket } from 'node:net';
import { RankControl } from '../control/rank-control';
import { ErrorClass, MpiError } from '../errors';
import type { Gps, JobRuntime } from '../job-runtime';
import { JOB_ENV } from '../job-runtime';
import { readJobEnvironment } from '../launch/job-env';
import { readFrames, rendezvousProof, writeFrame } from './frames';

/**
 * The JobRuntime of a process started by the test launcher (`launchJob`): a connection to the
 * launcher's rendezvous server, which plays mpirun's part (GPS exchange, OOB routing, abort).
 * Test-only: the runtime `mpirun` gives (over the lamd client) replaces it.
 */
export async function connectTestRuntime(
  env: Record<string, string | undefined> = process.env,
): Promise<JobRuntime> {
  const { jobId, rank, size, node, host, nodeName, secret } = readJobEnvironment(
    env,
    'the test launcher (launchJob from @ssi/mpi/testing)',
  );
  const rendezvous = env[JOB_ENV.TEST_RENDEZVOUS] ?? '';
  const [rdvHost, rdvPort] = rendezvous.split(':');

  const socket: Socket = connect({ host: rdvHost, port: Number(rdvPort) });
  socket.setNoDelay(true);
  socket.unref(); // the MPI layer keeps the process alive while it waits
  const gathers = new Map<number, (values: unknown[]) => void>();
  const mail = new Map<string, unknown[]>();
  const mailWaiters = new Map<string, ((v: unknown) => void)[]>();
  const deathCallbacks: ((rank: number, reason: string) => void)[] = [];
  let round = 0;
  const slowGather = gatherDelay(env.SSI_TEST_GATHER_DELAY);
  let finishing = false;
  let finAck: (() => void) | null = null;
  let welcome: (() => void) | null = null;
  const control = new RankControl(
    rank,
    async (msg) => void writeFrame(socket, { t: 'ctl', m: msg }),
    (why) => process.stderr.write(`rank ${rank}: control: ${why}\n`),
  );

  readFrames(socket, (m) => {
    switch (m.t) {
      case 'welcome':
        welcome?.();
        break;
      case 'gathered': {
        const r = m.round as number;
        const deliver = () => {
          gathers.get(r)?.(m.values as unknown[]);
          gathers.delete(r);
        };
        if (r === slowGather.round) setTimeout(deliver, slowGather.ms);
        else deliver();
        break;
      }
      case 'oob': {
        const key = `${m.from}:${m.tag}`;
        const waiter = mailWaiters.get(key)?.shift();
        if (waiter) waiter(m.value);
        else {
          let box = mail.get(key);
          if (!box) {
            box = [];
            mail.set(key, box);
          }
          box.push(m.value);
        }
        break;
      }
      case 'death':
        for (const cb of deathCallbacks) cb(m.rank as number, m.reason as string);
        break;
      case 'ctl':
        control.deliver(m.m);
        break;
      case 'finack':
        finAck?.();
        break;
    }
  });
  socket.on('close', () => {
    if (finishing) return;
    // The launcher is gone: nobody will ever answer; do not linger.
    process.stderr.write(`rank ${rank}: lost the connection to the test launcher; exiting\n`);
    process.exit(1);
  });

  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new MpiError(ErrorClass.ERR_OTHER, 'no welcome from the test launcher in 20 s')),
      20_000,
    );
    welcome = () => {
      clearTimeout(timer);
      resolve();
    };
    socket.once('error', (err) => {
      clearTimeout(timer);
      reject(new MpiError(ErrorClass.ERR_OTHER, `cannot reach the test launcher: ${err.message}`));
    });
    writeFrame(socket, { t: 'hello', rank, proof: rendezvousProof(secret, jobId, rank) });
  });

  const gps: Gps = { node, pid: process.pid, index: rank, grank: rank };
  return {
    jobId,
    secret,
    rank,
    size,
    gps,
    host,
    nodeName,
    control,
    allgather<T>(value: T): Promise<T[]> {
      const r = ++round;
      return new Promise<T[]>((resolve) => {
        gathers.set(r, resolve as (v: unknown[]) => void);
        writeFrame(socket, { t: 'gather', round: r, value });
      });
    },
    async oobSend(to: number, tag: number, value: unknown): Promise<void> {
      writeFrame(socket, { t: 'oob', to, tag, value });
    },
    oobRecv<T>(from: number, tag: number): Promise<T> {
      const key = `${from}:${tag}`;
      const box = mail.get(key);
      if (box && box.length > 0) return Promise.resolve(box.shift() as T);
      return new Promise<T>((resolve) => {
        let waiters = mailWaiters.get(key);
        if (!waiters) {
          waiters = [];
          mailWaiters.set(key, waiters);
        }
        waiters.push(resolve as (v: unknown) => void);
      });
    },
    abort(code: number, message: string): Promise<never> {
      finishing = true;
      // The launcher kills the job, this process included, when it has read the abort: exiting
      // first could let it see the exit before the abort and report the wrong cause.
      writeFrame(socket, { t: 'abort', code, message });
      setTimeout(() => process.exit(code || 1), 2000);
      return new Promise<never>(() => {});
    },
    async finalize(): Promise<void> {
      finishing = true;
      control.close();
      await new Promise<void>((resolve) => {
        finAck = resolve;
        writeFrame(socket, { t: 'fin' });
      });
      socket.end();
      socket.unref();
    },
    onPeerDeath(callback) {
      deathCallbacks.push(callback);
    },
  };
}

/**
 * Fault injection for tests of start-up races: `SSI_TEST_GATHER_DELAY=<round>:<ms>` hands this
 * rank the result of its allgather number `round` (1: MPI.init's GPS exchange; 2: the next one,
 * e.g. the tcp rpi's addresses with rpi_tcp_lazy) `ms` milliseconds late, as a loaded machine may.
 */
function gatherDelay(setting: string | undefined): { round: number; ms: number } {
  if (setting === undefined || setting === '') return { round: 0, ms: 0 };
  const m = /^(\d+):(\d+)$/.exec(setting);
  if (m === null) {
    throw new MpiError(
      ErrorClass.ERR_ARG,
      `SSI_TEST_GATHER_DELAY=${JSON.stringify(setting)}: expected <round>:<milliseconds>, e.g. 2:1500`,
    );
  }
  return { round: Number(m[1]), ms: Number(m[2]) };
}
