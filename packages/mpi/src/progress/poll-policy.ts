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
 * - the job oversubscribes the node (more of its ranks on it than cores): a rank that spins
 *   takes the core a peer of the same job needs to answer it; or
 * - the cores are busy with other programs and this process is not bound to one CPU: it waited
 *   for a CPU at least `CONTENDED_WAIT_PER_RUN` of the time it ran lately (where that cannot be
 *   known, not Linux: the 1-minute load average >= cores). A rank that sleeps is then woken on
 *   the busy CPU of the peer that woke it and runs at once (the scheduler favours a task that
 *   slept over a busy one), while one that spins keeps that CPU from the peer it waits for.
 *   Measured on 2 cores next to 1-4 busy loops, 2 unbound ranks, 8 B ping-pong: 7.6-8.2 µs
 *   one-way sleeping, 57-70 µs polling 100 µs (500 µs with a 1000 µs window). A rank bound to one
 *   CPU (taskset, a launcher's binding) cannot be stacked so, and there polling pays most on a
 *   busy machine: a rank that sleeps waits for a core at every wake-up, a polling one holds it
 *   (pinned ping-pong, load 6: 10-12 µs one-way polling, 64-266 µs sleeping);
 *
 * where it is `oversubscribedUs` (mpi_base_poll_oversubscribed_us, default 0: sleep at once).
 * An explicitly set mpi_base_poll_us always wins. The engine asks again now and then (load and
 * binding change while a job runs; see WaitPoller's `recheck`).
 */
export function choosePolling(i: PollInputs): PollChoice {
  const oversubscribed = i.nodeRanks > i.cores;
  const busy = i.contention !== null ? i.contention >= CONTENDED_WAIT_PER_RUN : i.load >= i.cores;
  const shared = busy && i.allowedCpus > 1;
  let budgetUs = Math.max(0, i.requestedUs);
  let why = `mpi_base_poll_us ${budgetUs}`;
  if ((oversubscribed || shared) && !i.explicit) {
    budgetUs = Math.max(0, i.oversubscribedUs);
    const what = oversubscribed
      ? `oversubscribed (${i.nodeRanks} ranks on ${i.cores} cores)`
      : `busy cores (${busyCores(i)}) and not bound to one CPU`;
    why = `${what}: mpi_base_poll_oversubscribed_us ${budgetUs}`;
  }
  const what =
    budgetUs > 0 ? `polls ${budgetUs} µs per wait, then sleeps` : 'never polls (sleeps at once)';
  const bound = i.allowedCpus === 1 ? 'bound to 1 CPU' : `${i.allowedCpus} CPUs allowed`;
  return {
    budgetUs,
    nodeRanks: i.nodeRanks,
    cores: i.cores,
    oversubscribed,
    shared,
    load: i.load,
    contention: i.contention,
    reason:
      `progress: ${what}; ${why}; ${i.nodeRanks} rank(s) on this node, ${i.cores} core(s), ` +
      `${cpuWait(i.contention)}load ${i.load.toFixed(1)}, ${bound}`,
  };
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
