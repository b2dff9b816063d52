import { availableParallelism, cpus, loadavg } from 'node:os';

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
  /** The machine's 1-minute load average now. */
  load: number;
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
  /** The cores are busy with other programs (load >= cores) and this process is not bound. */
  shared: boolean;
  load: number;
  /** One line for verbose output: what polls and why. */
  reason: string;
}

/**
 * The polling window for this process (issue 18): `requestedUs` (mpi_base_poll_us), unless
 *
 * - the job oversubscribes the node (more of its ranks on it than cores): a rank that spins
 *   takes the core a peer of the same job needs to answer it; or
 * - the cores are busy with other programs (1-minute load average >= cores) and this process is
 *   not bound to one CPU: the scheduler then tends to wake a rank on the CPU of the peer that
 *   woke it, behind that peer's spin, so every wait lasts the whole window (measured on 2 cores
 *   at load 6, 2 unbound ranks: a ping-pong with a 1000 µs window took 500 µs one-way; an np 2
 *   barrier 160-200 µs polling, 70-120 µs sleeping). A rank bound to one CPU (taskset, a
 *   launcher's binding) cannot be stacked so, and there polling pays most on a busy machine: a
 *   rank that sleeps waits for a core at every wake-up, a polling one holds it (pinned
 *   ping-pong, same load: 10-12 µs one-way polling, 64-266 µs sleeping);
 *
 * where it is `oversubscribedUs` (mpi_base_poll_oversubscribed_us, default 0: sleep at once).
 * An explicitly set mpi_base_poll_us always wins. The engine asks again now and then (load and
 * binding change while a job runs; see WaitPoller's `recheck`).
 */
export function choosePolling(i: PollInputs): PollChoice {
  const oversubscribed = i.nodeRanks > i.cores;
  const shared = i.load >= i.cores && i.allowedCpus > 1;
  let budgetUs = Math.max(0, i.requestedUs);
  let why = `mpi_base_poll_us ${budgetUs}`;
  if ((oversubscribed || shared) && !i.explicit) {
    budgetUs = Math.max(0, i.oversubscribedUs);
    const what = oversubscribed
      ? `oversubscribed (${i.nodeRanks} ranks on ${i.cores} cores)`
      : `busy cores (load ${i.load.toFixed(1)} on ${i.cores}) and not bound to one CPU`;
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
    reason:
      `progress: ${what}; ${why}; ${i.nodeRanks} rank(s) on this node, ${i.cores} core(s), ` +
      `load ${i.load.toFixed(1)}, ${bound}`,
  };
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

/** The inputs that change while a job runs, read now (two cheap system calls). */
export function machineNow(): { load: number; allowedCpus: number } {
  return { load: loadavg()[0]!, allowedCpus: availableParallelism() };
}
