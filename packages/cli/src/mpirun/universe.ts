import type { SsiContext } from '@ssi/core';
import {
  bootInProcess,
  bootUniverse,
  haltUniverse,
  isLamError,
  LamClient,
  registerBootBaseParams,
} from '@ssi/lam';
import { UsageError } from '../run-command';

/** The universe a job runs in: the running one, or a private one booted for this job alone. */
export interface JobUniverse {
  client: LamClient;
  /** Booted by this mpirun: halted when the job is over. */
  embedded: boolean;
  /** Halts an embedded universe (no-op for a running one) and closes the client. */
  release(): Promise<void>;
}

/**
 * Connects to the universe of this node; with none running, boots a private one-node universe
 * (its own session suffix, so a lamboot meanwhile is not disturbed) that `release` halts, and
 * that halts itself should this process die first: a newcomer needs no lamboot (LAM's embedded
 * default). Its lamd runs inside mpirun (`boot_base_in_process`) when the universe is this node
 * alone.
 */
export async function openUniverse(
  ctx: SsiContext,
  say: (line: string) => void,
  opts: { verbose: boolean; embeddedRefusal?: string },
): Promise<JobUniverse> {
  try {
    const client = await LamClient.connect({ params: ctx.params, name: 'mpirun' });
    return { client, embedded: false, release: async () => client.close() };
  } catch (err) {
    if (!isLamError(err, 'NO_UNIVERSE')) throw err;
    if (opts.embeddedRefusal) throw new UsageError(opts.embeddedRefusal, 1);
  }
  const env = { ...process.env, LAM_MPI_SESSION_SUFFIX: `mpirun-${process.pid}` };
  if (opts.verbose) say('mpirun: no universe is running here; booting a private one for this job');
  const bootOpts = { ssi: ctx, env, warn: (m: string) => say(`mpirun: warning: ${m}`) };
  registerBootBaseParams(ctx.params);
  const inProcess = ctx.params.get<boolean>('boot_base_in_process')
    ? await bootInProcess(bootOpts)
    : undefined;
  if (!inProcess) {
    // A lamd of its own (a universe of several nodes, or boot_base_in_process 0); a killed
    // mpirun takes it (and the job) along.
    await bootUniverse({ ...bootOpts, ownerPid: process.pid });
  } else if (opts.verbose) {
    say('mpirun: the private universe runs in this process');
  }
  let client: LamClient;
  try {
    client = await LamClient.connect({ env, params: ctx.params, name: 'mpirun' });
  } catch (err) {
    await inProcess?.halt('mpirun could not attach');
    throw new Error(`the private universe booted but does not answer: ${(err as Error).message}`);
  }
  return {
    client,
    embedded: true,
    release: async () => {
      if (inProcess) {
        client.close();
        await inProcess.halt('the job is over');
        return;
      }
      await haltUniverse(client).catch((e: Error) => say(`mpirun: warning: halting: ${e.message}`));
      client.close();
    },
  };
}
