import { Lamd } from '../lamd/lamd';
import { createSecret } from '../session/secret';
import { bootContext, type EngineOptions, ensureNotRunning, prepare } from './engine';
import { hbootConfigFor } from './launch';
import { universeFromBoot } from './rendezvous';
import type { BootNode } from './types';

/** A one-node universe whose lamd runs inside the process that booted it. */
export interface InProcessUniverse {
  /** The lamd's session directory (where LamClient finds it). */
  readonly sessionDir: string;
  /** Resolves with the lamd's exit code once it has shut down, for whatever reason. */
  readonly finished: Promise<number>;
  /** Stops what the lamd started and removes its session; nothing lingers after it resolves. */
  halt(reason: string): Promise<void>;
}

/**
 * Boots the universe of the boot schema with its lamd in this process, when that universe is
 * this node alone (the embedded default: no LAMBHOST, no batch allocation of several nodes) and
 * nothing needs another login or installation (`user=`, `prefix=`); otherwise returns undefined
 * having started nothing, and the caller boots as lamboot does.
 *
 * Why: a lamd of its own costs two Node starts on the job's critical path (hboot, then the lamd;
 * ~250 ms on two CPUs), and Open MPI's mpirun is its node's daemon the same way. The lamd is the
 * same code as a daemon's; should this process be killed, the lamd's reaper stops the processes
 * it started and removes the session directory and the job resources.
 */
export async function bootInProcess(opts: EngineOptions): Promise<InProcessUniverse | undefined> {
  const ctx = bootContext(opts, createSecret());
  const { selected, nodes } = await prepare(opts, { kind: 'schema' }, ctx);
  try {
    const node = nodes.length === 1 ? nodes[0]! : undefined;
    if (!node || !runsHere(node)) {
      await selected.actions.deallocateNodes(nodes);
      return undefined;
    }
    ensureNotRunning(node.name, ctx.sessionSuffix);
    // The lamd's configuration is exactly what hboot would hand a daemon (no rendezvous: the
    // universe is given to it below) and no owner to watch: it ends with this process.
    const hboot = hbootConfigFor(node, 'lamd', ctx, { host: node.address, port: 0 });
    if (hboot.mode !== 'lamd') throw new Error('hbootConfigFor gave no lamd configuration');
    const { owner: _none, ...config } = hboot.lamd;
    const lamd = new Lamd(config, ctx.params, { inProcess: true });
    node.port = await lamd.start();
    node.pid = process.pid;
    lamd.adoptUniverse(universeFromBoot(nodes), node.id);
    await selected.actions.deallocateNodes(nodes);
    return {
      sessionDir: lamd.sessionDir,
      finished: lamd.finished,
      // No linger: the caller's own connection is the one left, and it is done.
      halt: (reason) => lamd.shutdown(reason, 0, 0),
    };
  } finally {
    await selected.close();
  }
}

function runsHere(node: BootNode): boolean {
  return node.me && node.origin && node.boot && node.id === 0 && !node.user && !node.prefix;
}
