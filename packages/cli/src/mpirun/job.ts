import { randomBytes } from 'node:crypto';
import { constants } from 'node:os';
import type { BindPolicy, ExitStatus, LamClient, RemoteProcess } from '@ssi/lam';
import { type AbortMsg, formatAddress, HUB_ENV, type HubControl, JOB_ENV, JobHub } from '@ssi/mpi';
import { LineForwarder } from './output';
import type { Placement } from './placement';
import { commandFor } from './program-command';

export interface JobOptions {
  /** `LAM_MPI_SSI_*` for every rank: mpirun's --ssi settings. */
  ssiEnv: Record<string, string>;
  noWait: boolean;
  prefix: boolean;
  verbose: boolean;
  say: (line: string) => void;
  /**
   * Binding of the ranks (`--bind-to`, lam_bind_to; default none): each node's lamd places the
   * job's ranks on it (`planBinding` of @ssi/lam) and says what it chose.
   */
  bindTo?: BindPolicy;
  /** A node with more of the job's ranks than CPUs: bind them in blocks or not (lam_bind_oversubscribed). */
  bindOversubscribed?: number;
  /**
   * mpirun-side code of the job (crlam modules, tools) gets the job control channel here, before
   * any rank starts: `control.on(type, (rank, payload) => reply)`, `control.send(rank | 'all',
   * type, payload)`. Not called under -nw (rank 0 is the hub then).
   */
  control?: (control: HubControl, job: { jobId: string; size: number; end: EndJob }) => void;
  /**
   * mpirun got `signal` (SIGINT, SIGTERM): true when it is taken care of (a checkpointable job's
   * drain notice, which ends the job itself through `end`); else the job stops at once.
   */
  onStopSignal?: (signal: NodeJS.Signals) => boolean;
  /** The job id (default: a new one, `newJobId`). */
  jobId?: string;
  /** What the lamd starts for a rank instead of its program (a restart's restore command). */
  argvOf?: (rank: number) => string[] | undefined;
  /** More environment for every rank (a restart's series directory). */
  rankEnv?: Record<string, string>;
  /**
   * The job is being ended for `why` (a rank died, a signal): told before the ranks are killed,
   * with what failed (for automatic recovery: `recovery.ts`).
   */
  onEnding?: (why: string, failure: JobFailure) => void;
}

/**
 * What ended a job early. `killed`: a rank died of a signal; `lost`: the lamd of a rank's node is
 * gone; `exited`: a rank exited with a non-zero code or without MPI.finalize; `aborted`: a rank
 * called abort (or died of an error); `start`: the job could not start; `signal`: mpirun itself
 * got SIGINT or SIGTERM; `preempted`: a drain notice ended the job after its checkpoint.
 */
export interface JobFailure {
  kind: 'killed' | 'lost' | 'exited' | 'aborted' | 'start' | 'signal' | 'preempted';
  /** The rank that failed (not for `start` and `signal`). */
  rank?: number;
  /** Its node. */
  node?: number;
  /** The signal, for `killed` and `signal`. */
  signal?: string;
}

/** A job id unique on this machine: node, mpirun pid, random. */
export function newJobId(client: LamClient): string {
  return `${client.node}-${process.pid}-${randomBytes(4).toString('hex')}`;
}

/** How long an abort that follows a lost connection waits for the report of that death. */
const PEER_DEATH_GRACE_MS = 2000;

interface Rank {
  placement: Placement;
  proc?: RemoteProcess;
  status?: ExitStatus;
  out: LineForwarder;
  err: LineForwarder;
}

/** Exit status of a process that died of `signal`, as a shell reports it. */
function signalStatus(signal: string): number {
  return 128 + (constants.signals[signal as NodeJS.Signals] ?? 0);
}

function exportedEnv(names: readonly string[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of names) {
    const eq = name.indexOf('=');
    if (eq > 0) env[name.slice(0, eq)] = name.slice(eq + 1);
    else if (process.env[name] !== undefined) env[name] = process.env[name]!;
  }
  return env;
}

/**
 * Starts every rank through the lamds and sees the job through: the hub answers the ranks' MPI
 * start-up, output is forwarded rank-prefixed, and the first rank that fails (non-zero exit,
 * signal, abort, exit without finalize) ends the whole job. Resolves with the job's exit status.
 */
export async function runJob(
  client: LamClient,
  placements: readonly Placement[],
  opts: JobOptions,
): Promise<number> {
  const size = placements.length;
  const jobId = opts.jobId ?? newJobId(client);
  const secret = randomBytes(32).toString('hex');
  const ranks: Rank[] = placements.map((p) => ({
    placement: p,
    out: new LineForwarder(opts.prefix ? `[${p.rank}] ` : '', (s) => process.stdout.write(s)),
    err: new LineForwarder(opts.prefix ? `[${p.rank}] ` : '', (s) => process.stderr.write(s)),
  }));

  let ending: { code: number; why: string } | undefined;
  /** Ranks that asked to abort: their own exit is the abort's doing, not its cause. */
  const aborted = new Set<number>();
  /** Nodes whose lamd is gone: their ranks cannot be killed (a request there would time out). */
  const lostNodes = new Set<number>();
  let endJob: EndJob = () => {};
  const ended = new Promise<number>((resolve) => {
    endJob = (code, why, failure) => {
      if (ending) return;
      ending = { code, why };
      if (why) opts.say(`mpirun: ${why}`);
      if (why && failure) opts.onEnding?.(why, failure);
      void killAll(ranks, lostNodes).then(() => resolve(code));
    };
  });

  const hub = opts.noWait
    ? undefined
    : new JobHub(client, jobId, size, {
        onAbort: (a: AbortMsg) => {
          aborted.add(a.rank);
          const failure: JobFailure = { kind: 'aborted', rank: a.rank };
          const end = () =>
            endJob(a.code || 1, `${a.message} (rank ${a.rank} aborted the job)`, failure);
          // An abort that follows a lost connection is a consequence: the death of the peer, the
          // cause, is reported when it arrives; the abort ends the job only if it does not.
          if (a.peerLost) setTimeout(end, PEER_DEATH_GRACE_MS);
          else end();
        },
        onBadMessage: (why) => opts.say(`mpirun: warning: ignored a message: ${why}`),
      });
  if (hub) opts.control?.(hub.control, { jobId, size, end: (...a) => endJob(...a) });
  hub?.start();

  const perNode = new Map<number, number>();
  for (const p of placements) perNode.set(p.node.id, (perNode.get(p.node.id) ?? 0) + 1);
  const maxNodeRanks = String(Math.max(...perNode.values()));
  const slots = nodeSlots(placements);
  const envFor = (p: Placement, hubAddress: string): Record<string, string> => ({
    ...exportedEnv(p.part.exports),
    ...opts.ssiEnv,
    ...opts.rankEnv,
    [JOB_ENV.JOB_ID]: jobId,
    [JOB_ENV.RANK]: String(p.rank),
    [JOB_ENV.SIZE]: String(size),
    [JOB_ENV.NODE_ID]: String(p.node.id),
    [JOB_ENV.NODE_NAME]: p.node.name,
    [JOB_ENV.HOST_ADDR]: p.node.address,
    [JOB_ENV.MAX_NODE_RANKS]: maxNodeRanks,
    [JOB_ENV.SECRET]: secret,
    [HUB_ENV.HUB]: hubAddress,
  });

  const spawnRank = async (r: Rank, hubAddress: string) => {
    const p = r.placement;
    const cwd = p.part.wd ?? process.cwd();
    const onThisNode = p.node.id === client.address.node;
    const argv = opts.argvOf?.(p.rank) ?? commandFor(p.part.argv, process.cwd(), onThisNode);
    // `job` lets the lamd remove the job's shared-memory segments once its last rank here exits.
    const bind = {
      to: opts.bindTo ?? 'none',
      slot: slots[p.rank]!,
      of: perNode.get(p.node.id)!,
      oversubscribed: opts.bindOversubscribed ?? 0,
    };
    r.proc = await client.spawn(p.node.id, {
      argv,
      cwd,
      env: envFor(p, hubAddress),
      job: jobId,
      bind,
    });
    if (opts.verbose) {
      const b = r.proc.binding;
      const where =
        b?.cpus !== undefined ? `, on CPU ${b.cpus}: ${b.reason}` : b ? `: ${b.reason}` : '';
      opts.say(
        `mpirun: rank ${p.rank} is pid ${r.proc.pid} on n${p.node.id} (${p.node.name})${where}`,
      );
    }
    r.proc.on('stdout', (d: Buffer) => r.out.push(d));
    r.proc.on('stderr', (d: Buffer) => r.err.push(d));
  };

  const onSignal = (sig: NodeJS.Signals) => () => {
    if (ending || !opts.onStopSignal?.(sig)) {
      endJob(signalStatus(sig), `${sig}: stopping the job`, { kind: 'signal', signal: sig });
    }
  };
  const onInt = onSignal('SIGINT');
  const onTerm = onSignal('SIGTERM');
  process.on('SIGINT', onInt);
  process.on('SIGTERM', onTerm);
  try {
    try {
      if (opts.noWait) {
        // Rank 0 is the hub; the others learn its address once it runs.
        await spawnRank(ranks[0]!, 'self');
        const hubAddress = formatAddress({
          node: placements[0]!.node.id,
          proc: ranks[0]!.proc!.pid,
        });
        await Promise.all(ranks.slice(1).map((r) => spawnRank(r, hubAddress)));
        opts.say(`mpirun: started ${size} process(es) (job ${jobId}); not waiting for them (-nw)`);
        return 0;
      }
      await Promise.all(ranks.map((r) => spawnRank(r, formatAddress(client.address))));
    } catch (err) {
      endJob(1, `could not start the job: ${(err as Error).message}`, { kind: 'start' });
      return await ended;
    }
    for (const r of ranks) void watchRank(r, hub!, aborted, lostNodes, endJob);
    const all = Promise.all(ranks.map((r) => r.proc!.exited.catch(() => undefined)));
    const code = await Promise.race([ended, all.then(() => exitCodeOf(ranks))]);
    if (!ending) endJob(code, '', null);
    return await ended;
  } finally {
    process.off('SIGINT', onInt);
    process.off('SIGTERM', onTerm);
    hub?.stop();
    for (const r of ranks) {
      r.out.flush();
      r.err.flush();
    }
  }
}

/** Each rank's index among the job's ranks on its node (what the lamd binds by). */
function nodeSlots(placements: readonly Placement[]): number[] {
  const next = new Map<number, number>();
  const slots: number[] = [];
  for (const p of placements) {
    const slot = next.get(p.node.id) ?? 0;
    next.set(p.node.id, slot + 1);
    slots[p.rank] = slot;
  }
  return slots;
}

/** Ends the job with `code`, saying `why` once (first call wins); the ranks are killed. */
export type EndJob = (code: number, why: string, failure: JobFailure | null) => void;

/** Ends the job at the first rank that fails; a clean exit needs MPI.finalize if MPI.init ran. */
async function watchRank(
  r: Rank,
  hub: JobHub,
  aborted: ReadonlySet<number>,
  lostNodes: Set<number>,
  endJob: EndJob,
) {
  const rank = r.placement.rank;
  const node = r.placement.node.id;
  const where = `rank ${rank} (pid ${r.proc!.pid} on n${node})`;
  try {
    r.status = await r.proc!.exited;
  } catch (err) {
    // The only rejection of `exited` is the loss of the node's lamd.
    lostNodes.add(node);
    endJob(1, `${where}: ${(err as Error).message}`, { kind: 'lost', rank, node });
    return;
  }
  const s = r.status;
  if (aborted.has(rank)) return;
  const exited: JobFailure = { kind: 'exited', rank, node };
  if (s.signal) {
    endJob(signalStatus(s.signal), `${where} was killed by ${s.signal}`, {
      kind: 'killed',
      rank,
      node,
      signal: s.signal,
    });
  } else if (s.code !== 0) endJob(s.code ?? 1, `${where} exited with code ${s.code}`, exited);
  else if (hub.addresses[rank] && !hub.finalized.has(rank)) {
    endJob(1, `${where} exited without calling MPI.finalize`, exited);
  }
}

function exitCodeOf(ranks: readonly Rank[]): number {
  for (const r of ranks) {
    const s = r.status;
    if (!s) return 1;
    if (s.signal) return signalStatus(s.signal);
    if (s.code !== 0) return s.code ?? 1;
  }
  return 0;
}

async function killAll(ranks: readonly Rank[], lostNodes: ReadonlySet<number>): Promise<void> {
  // A lost node's ranks all learn of it at once, each in its own continuation: let them.
  await new Promise((resolve) => setImmediate(resolve));
  const alive = ranks.filter(
    (r) => r.proc && !r.proc.status && !lostNodes.has(r.placement.node.id),
  );
  // Every rank is frozen before any dies: a rank that outlived a killed peer by a moment would
  // report the lost connection as an MPI error, although the job is being ended on purpose and
  // mpirun has said why, once.
  await Promise.allSettled(alive.map((r) => r.proc!.kill('SIGSTOP')));
  await Promise.allSettled(alive.map((r) => r.proc!.kill('SIGKILL')));
  await Promise.allSettled(ranks.map((r) => r.proc?.exited));
}
