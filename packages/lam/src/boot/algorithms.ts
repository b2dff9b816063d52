import { LamError } from '../errors';
import { rteLaunchFor } from './launch';
import { describeBootNode } from './rendezvous';
import type {
  BootActions,
  BootContext,
  BootNode,
  RteProcKind,
  StartOptions,
  StartResult,
} from './types';

export type AlgorithmName = 'linear' | 'linear_windowed';

export interface AlgorithmRun {
  actions: BootActions;
  ctx: BootContext;
  nodes: BootNode[];
  which: RteProcKind;
  options: StartOptions & { rendezvousAt?: { host: string; port: number } };
}

/** Nodes an algorithm starts: marked NT_BOOT and with a real node id (App. B.1.17). */
export function bootableNodes(nodes: BootNode[]): BootNode[] {
  return nodes.filter((n) => n.boot && n.id >= 0);
}

/**
 * One node: launch, then (for lamds) wait for its call back. NT_BOOT is cleared once the node
 * is up, so the caller can tell which nodes were started (App. B.2.8).
 */
async function startOne(run: AlgorithmRun, node: BootNode, counter: { started: number }) {
  const { actions, ctx, which, options } = run;
  if (!actions.startRteProc) {
    throw new LamError(
      'BAD_CONFIG',
      'this boot module uses a base algorithm but has no startRteProc',
    );
  }
  const launch = rteLaunchFor(node, which, ctx, options.rendezvousAt);
  ctx.verbose.log(100, `starting ${which} on ${describeBootNode(node)}`);
  const outcome = await actions.startRteProc(node, launch);
  counter.started++;
  if (options.rendezvous) await actions.receiveLamdInfo([node]);
  node.boot = false;
  options.onNode?.(node, outcome);
}

function fail(run: AlgorithmRun, result: StartResult, node: BootNode, err: unknown) {
  const error = err instanceof Error ? err : new Error(String(err));
  result.failures.push({ node, error });
  run.options.onNodeError?.(node, error);
}

/** Linear (App. B.1.17): each node is started, and called back, before the next. */
export async function linearAlgorithm(run: AlgorithmRun): Promise<StartResult> {
  const counter = { started: 0 };
  const result: StartResult = { started: 0, failures: [] };
  for (const node of bootableNodes(run.nodes)) {
    try {
      await startOne(run, node, counter);
    } catch (err) {
      fail(run, result, node, err);
      if (!run.options.continueOnError) break;
    }
  }
  result.started = counter.started;
  return result;
}

/**
 * Linear windowed (App. B.1.17): nodes are launched in order without waiting for each one to
 * come up, but never more than `windowSize` at once are between launch and call back. Without
 * a rendezvous it is exactly the linear algorithm.
 */
export async function linearWindowedAlgorithm(
  run: AlgorithmRun,
  windowSize: number,
): Promise<StartResult> {
  if (!run.options.rendezvous) return linearAlgorithm(run);
  const window = Math.max(1, windowSize);
  const counter = { started: 0 };
  const result: StartResult = { started: 0, failures: [] };
  const inflight = new Set<Promise<void>>();
  let stop = false;
  for (const node of bootableNodes(run.nodes)) {
    while (inflight.size >= window) await Promise.race(inflight);
    if (stop) break;
    const p: Promise<void> = startOne(run, node, counter)
      .catch((err) => {
        fail(run, result, node, err);
        if (!run.options.continueOnError) stop = true;
      })
      .finally(() => inflight.delete(p));
    inflight.add(p);
  }
  await Promise.all(inflight);
  result.started = counter.started;
  return result;
}

/** The algorithm `boot_base_algorithm` names (a module may force one). */
export function runBootAlgorithm(run: AlgorithmRun, force?: AlgorithmName): Promise<StartResult> {
  const params = run.ctx.params;
  const name = force ?? (params.get<string>('boot_base_algorithm') as AlgorithmName);
  if (name === 'linear') return linearAlgorithm(run);
  if (name === 'linear_windowed') {
    return linearWindowedAlgorithm(run, params.get<number>('boot_base_linear_win_size'));
  }
  throw new LamError(
    'BAD_ARGS',
    `boot_base_algorithm "${name}" is not an algorithm; use "linear" or "linear_windowed"`,
  );
}
