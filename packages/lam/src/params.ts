import type { ParamRegistry } from '@ssi/core';

/**
 * Parameters of the run-time environment itself (`lam_*`). Times are in seconds, like LAM's;
 * every wait of the client library and of the lamd is bounded by one of these.
 */
export const LAM_PARAMS = {
  lam_client_timeout: {
    type: 'int',
    default: 30,
    help: 'Seconds a client (lamnodes, mpirun, an MPI process) waits for a lamd to answer a request',
  },
  lam_connect_timeout: {
    type: 'int',
    default: 10,
    help: 'Seconds to establish an authenticated connection to a lamd (clients and lamd-to-lamd)',
  },
  lam_auth_timeout: {
    type: 'int',
    default: 10,
    help: 'Seconds a lamd gives a new connection to prove the universe secret before dropping it',
  },
  lam_max_frame: {
    type: 'int',
    default: 64 * 1024 * 1024,
    help: 'Largest wire frame in bytes; a larger announced frame is a protocol error',
  },
  lam_kill_grace: {
    type: 'int',
    default: 3,
    help: 'Seconds between SIGTERM and SIGKILL when a lamd stops the processes it started',
  },
  lam_mailbox_limit: {
    type: 'int',
    default: 16 * 1024 * 1024,
    help: 'Bytes of OOB messages a lamd holds for one process that has not attached yet',
  },
  lam_bind_to: {
    type: 'string',
    default: 'core',
    help: 'Binding of the ranks mpirun starts (mpirun --bind-to): "core" binds each rank of a job to a core (or hardware thread) of its own when the node has that many CPUs free, not when its CPUs are held by other pinned processes; a node with more ranks of the job than CPUs: see lam_bind_oversubscribed; "none" never binds',
  },
  lam_bind_oversubscribed: {
    type: 'int',
    default: 4,
    help: 'A job with more ranks on a node than CPUs, when lam_bind_to binds (mpirun --bind-to core): consecutive ranks are bound in blocks, one per CPU (ranks 0-1 on one CPU, 2-3 on the next for 4 ranks on 2 CPUs), when that puts at most this many ranks on a CPU, so that the partners of the first rounds of recursive doubling and binomial trees wake each other on their own CPU (measured on 2 vCPUs, tcp, coll tuned: barrier 68 against 85 µs unbound at 4 ranks, 148 against 208 at 8; allreduce 8 B 70 against 85, 195 against 251); more ranks a CPU: not bound (mpirun -np 64 started 5-10 % slower bound); 0: never',
  },
} as const;

export type LamParamName = keyof typeof LAM_PARAMS;

export function registerLamParams(params: ParamRegistry): void {
  for (const [name, spec] of Object.entries(LAM_PARAMS)) {
    if (!params.isRegistered(name)) params.register(name, { ...spec }, 'lam');
  }
}

/** A `lam_*` parameter converted to milliseconds (for the ones measured in seconds). */
export function lamSeconds(params: ParamRegistry, name: LamParamName): number {
  registerLamParams(params);
  return params.get<number>(name) * 1000;
}

export function lamInt(params: ParamRegistry, name: LamParamName): number {
  registerLamParams(params);
  return params.get<number>(name);
}
