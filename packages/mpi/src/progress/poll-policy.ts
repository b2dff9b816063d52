import { availableParallelism, cpus, loadavg } from 'node:os';
import type { RunDelay } from './run-delay';

/**
 * A rank that waits this long for a CPU per unit of time it runs (see `RunDelay`) shares its
 * cores with other busy programs. Measured on 2 cores, 2 unbound ranks in an 8 B ping-pong: next
 * to 1-4 busy loops 0.43-1.0 whether polling or not; next to a `nice`d build (load 12) 0.15-0.21
 * polling, and 0.06-0.10 sleeping on a quiet machine.
 */
export const CONTENDED_WAIT_PER_RUN = 0.5;

/** What polling depends on, as seen now. */
export interface PollInputs {
  /** mpi_base_poll_us, µs. */
  requestedUs: number;
  /** Whether mpi_base_poll_us was set (not its default): then it is used whatever the node. */
  explicit: boolean;
  /** mpi_base_poll_oversubscribed_us, µs. */
  oversubscribedUs: number;
  /** Whether mpi_base_poll_oversubscribed_us was set (then it is used with or without yields). */
  oversubscribedExplicit: boolean;
  /** mpi_base_poll_shared_us, µs. */
  sharedUs: number;
  /**
   * mpi_base_poll_yield: polling turns give the CPU away on an oversubscribed node with at most
   * this many of the job's ranks per core (0: never).
   */
  yieldPerCore: number;
  /** Whether this process can give the CPU away (@ssi/sched's addon), or why not. */
  yielding: { ok: true } | { ok: false; reason: string };
  /** Ranks of the job on this node. */
  nodeRanks: number;
  /** The cores the job's ranks on this node share (`cpuPool`). */
  cores: number;
  /** The machine's 1-minute load average now (what decides where `contention` is unknown). */
  load: number;
  /** ns this process waited for a CPU per ns it ran, lately (`RunDelay`); null: unknown. */
  contention: number | null;
  /** CPUs this process may run on now (`os.availableParallelism()`: its CPU affinity). */
  allowedCpus: number;
}

/** What was chosen, and why. */
export interface PollChoice {
  budgetUs: number;
  nodeRanks: number;
  cores: number;
  /** More of the job's ranks on the node than cores. */
  oversubscribed: boolean;
  /** Every polling turn gives the CPU away (sched_yield): oversubscribed, with yields possible. */
  yields: boolean;
  /** The cores are busy with other programs and this process is not bound to one CPU. */
  shared: boolean;
  load: number;
  contention: number | null;
  /** One line for verbose output: what polls and why. */
  reason: string;
}

/**
 * The polling window for this process (issue 18): `requestedUs` (mpi_base_poll_us), unless
 *
 * - the job oversubscribes the node (more of its ranks on it than cores): then ranks share a
 *   core, and a rank that keeps the event loop busy holds the core its peer needs to answer it
 *   until the time slice ends. Polling there gives the CPU away at every turn (`yields`:
 *   sched_yield through @ssi/sched), so the ranks of a core take turns and see each other's
 *   messages without sleeping; the window is `oversubscribedUs` (mpi_base_poll_oversubscribed_us).
 *   Measured at np 4 on 2 CPUs (tcp, tuned, ranks in blocks): barrier 68-76 µs sleeping at once,
 *   37-47 polling 50 µs with yields. Not with more ranks per core than `yieldPerCore`, nor while
 *   other programs keep the cores busy (`noYields`); without yields polling was slower than
 *   sleeping (np 4 barrier 59 / 64 / 112 / 284 µs for windows of 0 / 15 / 50 / 200), so the
 *   window is then 0 unless mpi_base_poll_oversubscribed_us was set explicitly; or
 * - the cores are busy with other programs and this process is not bound to one CPU: it waited
 *   for a CPU at least `CONTENDED_WAIT_PER_RUN` of the time it ran lately (where that cannot be
 *   known, not Linux: the 1-minute load average >= cores). A rank that sleeps is then woken on
 *   the busy CPU of the peer that woke it and runs at once (the scheduler favours a task that
 *   slept over a busy one), while one that spins keeps that CPU from the peer it waits for.
 *   Measured on 2 cores next to 1-4 busy loops, 2 unbound ranks, 8 B ping-pong: 7.6-8.2 µs
 *   one-way sleeping, 57-70 µs polling 100 µs (500 µs with a 1000 µs window; with yields
 *   7.2-10.7 against 7.1-7.4 sleeping). A rank bound to one CPU (taskset, a launcher's binding)
 *   cannot be stacked so, and there polling pays most on a busy machine: a rank that sleeps
 *   waits for a core at every wake-up, a polling one holds it (pinned ping-pong, load 6:
 *   10-12 µs one-way polling, 64-266 µs sleeping). The window is then `sharedUs`
 *   (mpi_base_poll_shared_us, default 0: sleep at once).
 *
 * An explicitly set mpi_base_poll_us always wins (and never yields). The engine asks again now
 * and then (load and binding change while a job runs; see WaitPoller's `recheck`).
 */
export function choosePolling(i: PollInputs): PollChoice {
  const oversubscribed = i.nodeRanks > i.cores;
  const busy = i.contention !== null ? i.contention >= CONTENDED_WAIT_PER_RUN : i.load >= i.cores;
  const shared = busy && i.allowedCpus > 1;
  let budgetUs = Math.max(0, i.requestedUs);
  let yields = false;
  let why = `mpi_base_poll_us ${budgetUs}`;
  if (oversubscribed && !i.explicit) {
    const unless = noYields(i);
    yields = unless === null;
    budgetUs = yields || i.oversubscribedExplicit ? Math.max(0, i.oversubscribedUs) : 0;
    yields &&= budgetUs > 0;
    const how = unless === null ? 'with yields' : `without yields (${unless})`;
    why = `oversubscribed (${i.nodeRanks} ranks on ${i.cores} cores): mpi_base_poll_oversubscribed_us ${budgetUs} ${how}`;
  } else if (shared && !i.explicit) {
    budgetUs = Math.max(0, i.sharedUs);
    why = `busy cores (${busyCores(i)}) and not bound to one CPU: mpi_base_poll_shared_us ${budgetUs}`;
  }
  const what =
    budgetUs === 0
      ? 'never polls (sleeps at once)'
      : `polls ${budgetUs} µs per wait${yields ? ', giving the CPU away at every turn' : ''}, then sleeps`;
  const bound = i.allowedCpus === 1 ? 'bound to 1 CPU' : `${i.allowedCpus} CPUs allowed`;
  return {
    budgetUs,
    nodeRanks: i.nodeRanks,
    cores: i.cores,
    oversubscribed,
    yields,
    shared,
    load: i.load,
    contention: i.contention,
    reason:
      `progress: ${what}; ${why}; ${i.nodeRanks} rank(s) on this node, ${i.cores} core(s), ` +
      `${cpuWait(i.contention)}load ${i.load.toFixed(1)}, ${bound}`,
  };
}

/**
 * Why the polling turns of an oversubscribed rank must not give the CPU away, or null when they
 * may: yields pay where the ranks of a core hand it to each other. With more ranks per core a
 * yielding rank waits behind several others (np 8 on 2 CPUs, 4 per core: allreduce 8 B 200-376 µs
 * polling with yields against 192 sleeping), and with other programs busy on the cores it waits
 * for their time slice (np 4 barrier at load 22: 180 µs against 69 sleeping). Their presence shows
 * as CPU wait beyond what the job's own ranks cause (each of k ranks on a core waits about k - 1
 * times as long as it runs when all poll); where the CPU wait is unknown, a load average above
 * the job's ranks plus the cores.
 */
function noYields(i: PollInputs): string | null {
  if (!i.yielding.ok) return i.yielding.reason;
  const perCore = Math.ceil(i.nodeRanks / i.cores);
  if (perCore > i.yieldPerCore)
    return `${perCore} ranks per core, more than mpi_base_poll_yield ${i.yieldPerCore}`;
  const others =
    i.contention !== null
      ? i.contention >= perCore - 1 + CONTENDED_WAIT_PER_RUN
      : i.load >= i.nodeRanks + i.cores;
  return others ? `other programs keep the cores busy: ${busyCores(i)}` : null;
}

function busyCores(i: PollInputs): string {
  return i.contention !== null
    ? `waited ${i.contention.toFixed(2)} ns for a CPU per ns run`
    : `load ${i.load.toFixed(1)} on ${i.cores}`;
}

function cpuWait(contention: number | null): string {
  return contention === null ? '' : `CPU wait ${contention.toFixed(2)} per run, `;
}

/**
 * The cores the job's ranks on this node share, for the oversubscription check: the CPUs this
 * process may use (its affinity: a cpuset of Slurm or a container counts, not the machine's
 * CPUs), unless it is bound to one CPU — then whoever bound it placed the ranks, and the node's
 * cores are the pool (a rank bound before MPI.init would otherwise count as oversubscribed).
 */
export function cpuPool(
  allowedCpus: number = availableParallelism(),
  nodeCpus: () => number = () => cpus().length || 1,
): number {
  return allowedCpus > 1 ? allowedCpus : Math.max(1, nodeCpus());
}

/** The inputs that change while a job runs, read now (a few cheap system calls). */
export function machineNow(
  delay: RunDelay,
): Pick<PollInputs, 'load' | 'allowedCpus' | 'contention'> {
  return { load: loadavg()[0]!, allowedCpus: availableParallelism(), contention: delay.sample() };
}
