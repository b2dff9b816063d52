import type { ParamRegistry } from '@ssi/core';
import { registerVerboseParams, SsiError } from '@ssi/core';
import { COLL_BASE_PARAMS } from './coll/framework';

/**
 * The parameters of the MPI layer and of the rpi framework base (`mpi_base_*`, `rpi_base_*`),
 * registered by `MPI.init` and by `laminfo` (which lists them without starting MPI).
 */
export const MPI_BASE_PARAMS = {
  rpi_base_fast: {
    type: 'boolean',
    default: true,
    help: 'Use the rpi module fast send path (Ch. 5.1.7) for blocking sends when no request is active (a blocking receive of a message already here never waits: the MPI layer matches it)',
  },
  mpi_base_poll_us: {
    type: 'int',
    default: 100,
    help: 'Microseconds an MPI call that waits (blocking send/receive, wait, waitall, probe) keeps the event loop polling its sockets (setImmediate turns) before it sleeps, plus the transfer time (at 1 GB/s) of a long message the call moves or its receive buffer holds; 0 turns polling off. Nothing polls while no MPI call waits',
  },
  mpi_base_poll_oversubscribed_us: {
    type: 'int',
    default: 50,
    help: 'The polling window used instead of mpi_base_poll_us when the job has more ranks on this node than cores (oversubscribed), unless mpi_base_poll_us is set explicitly. Its polling turns give the CPU away (sched_yield) so that the ranks sharing a core take turns instead of sleeping, where mpi_base_poll_yield allows; where it does not (more ranks per core, other programs busy on the cores, no @ssi/sched addon) polling would hold the core a peer needs, and the window is 0 (sleep at once) unless this is set explicitly',
  },
  mpi_base_poll_yield: {
    type: 'int',
    default: 2,
    help: "On an oversubscribed node with at most this many of the job's ranks per core, polling turns give the CPU away (sched_yield through the native addon of @ssi/sched), unless other programs keep the cores busy (CPU wait beyond what the job's ranks cause, read every 250 ms); 0: never",
  },
  mpi_base_poll_shared_us: {
    type: 'int',
    default: 0,
    help: 'The polling window used instead of mpi_base_poll_us when this process waits for a CPU half as long as it runs (other programs keep the cores busy; Linux schedstat, else the load average >= cores) and is not bound to one CPU (read again every 250 ms), unless mpi_base_poll_us is set explicitly; 0: sleep at once (a rank stacked on a busy CPU is woken faster than it polls)',
  },
  mpi_base_yield_every: {
    type: 'int',
    default: 64,
    help: 'Every this many MPI calls in a row that complete without waiting (fast-path sends, receives of messages already here) one resolves after a turn of the event loop, so incoming messages and timers progress in a loop of such calls; 0: never',
  },
  mpi_base_yield_gap_us: {
    type: 'int',
    default: 1000,
    help: 'At most one of the event-loop turns of mpi_base_yield_every per this many microseconds (a shared-memory ping-pong completes every call at once, ~1 µs each, and a turn costs ~7 µs); 0: a turn every mpi_base_yield_every-th call',
  },
  mpi_base_init_timeout: {
    type: 'int',
    default: 60_000,
    help: 'Milliseconds MPI.init waits for the GPS exchange and the rpi connection set-up before failing',
  },
  mpi_base_abort_on_unhandled: {
    type: 'boolean',
    default: true,
    help: 'An unhandled rejection or uncaught exception in a rank aborts the whole job (instead of leaving the other ranks waiting)',
  },
  mpi_base_defer_ca_certs: {
    type: 'boolean',
    default: true,
    help: "mpirun: ranks start with NODE_EXTRA_CA_CERTS empty (Node 20 parses that file at every process start, ~40 ms of CPU per rank for a system bundle) and MPI.init puts mpirun's value back in process.env (for the processes a rank starts); the rank's own TLS connections do not trust those certificates. 0, or -x NODE_EXTRA_CA_CERTS: ranks start with it",
  },
  mpi_base_startup_snapshot: {
    type: 'boolean',
    default: true,
    help: "mpirun: start JavaScript ranks of its private universe on its node from a V8 start-up snapshot (node --snapshot-blob) in which the start-up bundles of @ssi/mpi and the installed rpi and coll modules are already loaded (CPU per rank at 64 ranks 87 -> 75 ms); built by the first job (~0.4 s), kept beside the bundles' code caches (none when SSI_CODE_CACHE is off). 0: ranks start as plain node",
  },
  mpi_base_warm_up: {
    type: 'boolean',
    default: true,
    help: "MPI.init sends three 8-byte messages to itself on COMM_SELF (the MPI layer's self path, no rpi), so that the first message between two ranks does not pay for the first run of the send, receive and matching code in the process (issue 21); never with a crmpi module (its rollback log sees every message); 0: no rehearsal",
  },
  crmpi_base_safepoint_ms: {
    type: 'int',
    default: 20,
    help: 'mpi.cr.safePoint() yields to the event loop (where a checkpoint request is heard) at most this often, in ms',
  },
  crlam_base_prepare_timeout: {
    type: 'int',
    default: 10_000,
    help: 'mpirun: ms a checkpoint waits for every rank to interrupt (a rank computing outside MPI or in a critical section delays it) before it backs off and tries again',
  },
  crlam_base_prepare_attempts: {
    type: 'int',
    default: 3,
    help: 'mpirun: how many times a checkpoint tries to interrupt every rank before it is refused',
  },
  crlam_base_recover: {
    type: 'int',
    default: 0,
    help: 'mpirun: how many times a checkpointable job that loses a rank (killed by a signal) or a node (its lamd gone) is restarted by itself from its latest complete checkpoint series (0: never)',
  },
  crlam_base_recover_nodes: {
    type: 'string',
    default: '',
    help: "mpirun: spare nodes (e.g. n4,5) that take the ranks of a lost node at an automatic recovery (default: the job's remaining nodes)",
  },
} as const;

export const COLL_PARAMS = {
  ...COLL_BASE_PARAMS,
  coll_base_timeout: {
    type: 'int',
    default: 300,
    help: 'Seconds a collective call waits for the other members before it fails with ERR_OTHER (0: no limit)',
  },
} as const;

/**
 * The smallest meaningful value of each MPI-layer integer: below it a value is a mistake (a
 * negative timeout), reported with its source by whoever registers these first (mpirun, before
 * any rank starts).
 */
export const MPI_PARAM_MINIMUMS: Readonly<Record<string, number>> = {
  mpi_base_init_timeout: 1,
  coll_base_timeout: 0,
  coll_crossover: 1,
  coll_reduce_crossover: 1,
  crmpi_base_safepoint_ms: 0,
  crlam_base_prepare_timeout: 1,
  crlam_base_prepare_attempts: 1,
};

function checkMinimums(params: ParamRegistry): void {
  for (const [name, min] of Object.entries(MPI_PARAM_MINIMUMS)) {
    const p = params.lookup(name);
    if ((p.value as number) >= min) continue;
    throw new SsiError(
      'BAD_PARAM',
      `parameter ${name} must be at least ${min}, but the ${p.source} (${p.origin}) gives "${p.value}"`,
    );
  }
}

export function registerMpiParams(params: ParamRegistry): void {
  for (const [name, spec] of Object.entries(COLL_PARAMS)) {
    if (!params.isRegistered(name)) params.register(name, { ...spec }, 'coll base');
  }
  if (!params.isRegistered('coll_verbose')) registerVerboseParams(params, 'coll');
  for (const [name, spec] of Object.entries(MPI_BASE_PARAMS)) {
    if (!params.isRegistered(name)) {
      params.register(
        name,
        { ...spec, type: spec.type, default: spec.default },
        name.startsWith('rpi')
          ? 'rpi base'
          : name.startsWith('cr')
            ? name.slice(0, 5) + ' base'
            : 'mpi base',
      );
    }
  }
  if (!params.isRegistered('rpi_verbose')) registerVerboseParams(params, 'rpi');
  if (!params.isRegistered('mpi_verbose')) registerVerboseParams(params, 'mpi');
  checkMinimums(params);
}
