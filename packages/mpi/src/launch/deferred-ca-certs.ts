import type { ParamRegistry } from '@ssi/core';

/**
 * Node's extra CA certificates, deferred for ranks (issue #21). Node 20 reads and parses the
 * file `NODE_EXTRA_CA_CERTS` names, and builds its root store, at every process start, before
 * any user code: with a system bundle of 144 certificates that was 40 of a bare `node`'s 66 ms of
 * CPU, about a third of a rank's start-up, paid N times by a job on one machine's cores. Ranks
 * rarely open TLS connections, so mpirun starts them with the variable empty (Node then loads
 * nothing) and hands its value over under `DEFERRED_CA_CERTS_ENV`; `MPI.init` puts it back in
 * `process.env`, so the processes a rank starts get it. The rank's own TLS connections do not
 * trust those certificates: `mpi_base_defer_ca_certs 0`, or `-x NODE_EXTRA_CA_CERTS`, starts
 * ranks with it.
 */
export const NODE_CA_CERTS_ENV = 'NODE_EXTRA_CA_CERTS';
export const DEFERRED_CA_CERTS_ENV = 'SSI_DEFERRED_NODE_EXTRA_CA_CERTS';

type Env = Record<string, string | undefined>;

/**
 * mpirun's side: the variables every rank gets so that it starts without loading extra CA
 * certificates, or {} when there is nothing to defer, the parameter is off, or the user exports
 * the variable explicitly (`-x NODE_EXTRA_CA_CERTS`, in `exported`).
 */
export function deferredCaCertsEnv(
  params: ParamRegistry,
  exported: readonly string[],
  env: Env = process.env,
): Record<string, string> {
  const value = env[NODE_CA_CERTS_ENV];
  if (!value || !params.get<boolean>('mpi_base_defer_ca_certs')) return {};
  if (exported.some((x) => x.split('=', 1)[0] === NODE_CA_CERTS_ENV)) return {};
  return { [NODE_CA_CERTS_ENV]: '', [DEFERRED_CA_CERTS_ENV]: value };
}

/** The rank's side (`MPI.init`): the deferred value goes back where the program expects it. */
export function restoreDeferredCaCerts(env: Env = process.env): void {
  const value = env[DEFERRED_CA_CERTS_ENV];
  if (value === undefined) return;
  if (!env[NODE_CA_CERTS_ENV]) env[NODE_CA_CERTS_ENV] = value;
  delete env[DEFERRED_CA_CERTS_ENV];
}
