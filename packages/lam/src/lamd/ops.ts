import { constants } from 'node:os';
import { LamError } from '../errors';
import { lamSeconds } from '../params';
import { type UniverseNode, universeNodeProblem } from '../universe';
import { LAMD_OPS, type LamdOp, type LamdOps } from '../wire/ops';
import type { WireMessage } from '../wire/wire';
import type { Lamd } from './lamd';
import { spawnRequestProblem } from './process-table';

type Req = Extract<WireMessage, { t: 'req' }>;

/** Answers one request addressed to this lamd. Throws a LamError for bad requests. */
export async function runOp(lamd: Lamd, req: Req): Promise<unknown> {
  if (!LAMD_OPS.includes(req.op as LamdOp)) {
    throw new LamError('BAD_ARGS', `unknown request "${req.op}" (known: ${LAMD_OPS.join(', ')})`);
  }
  const op = req.op as LamdOp;
  if (op !== 'ping' && op !== 'halt') lamd.requireRunning(op);
  switch (op) {
    case 'ping':
      return {
        node: lamd.nodeId,
        name: lamd.config.nodeName,
        pid: process.pid,
        procs: lamd.procs.size,
      } satisfies LamdOps['ping'][1];
    case 'universe':
      return lamd.nodes();
    case 'spawn':
      return spawn(lamd, req);
    case 'signal':
      return signal(lamd, req.args);
    case 'procs':
      return lamd.procs.list();
    case 'clean': {
      const killed = await lamd.procs.killAll(lamSeconds(lamd.params, 'lam_kill_grace'));
      lamd.removeJobResources();
      return { killed, messages: lamd.clearMailboxes() };
    }
    case 'halt':
      // Answer first: the reply is queued before the shutdown starts closing connections.
      setImmediate(() => void lamd.shutdown(`halt requested by n${req.src.node}:${req.src.proc}`));
      return null;
    case 'universe-update':
      return update(lamd, req.args);
  }
}

async function spawn(lamd: Lamd, req: Req): Promise<LamdOps['spawn'][1]> {
  const problem = spawnRequestProblem(req.args);
  if (problem) throw new LamError('BAD_ARGS', `spawn on ${lamd.describe()}: ${problem}`);
  const args = req.args as LamdOps['spawn'][0];
  const io = args.io ?? req.src;
  return await lamd.procs
    .spawn(
      {
        argv: args.argv,
        cwd: args.cwd ?? undefined,
        env: args.env ?? undefined,
        job: args.job ?? undefined,
        bind: args.bind ?? undefined,
      },
      io,
    )
    .catch((err: LamError) => {
      throw new LamError('REMOTE', `on ${lamd.describe()}: ${err.message}`);
    });
}

function signal(lamd: Lamd, args: unknown): null {
  const a = args as { pid?: unknown; signal?: unknown } | null;
  const sig = a?.signal;
  if (!a || !Number.isInteger(a.pid) || typeof sig !== 'string' || !(sig in constants.signals)) {
    throw new LamError(
      'BAD_ARGS',
      'signal needs { pid, signal } with a signal name like "SIGTERM"',
    );
  }
  try {
    lamd.procs.signal(a.pid as number, sig as NodeJS.Signals);
  } catch (err) {
    throw new LamError('BAD_ARGS', `on ${lamd.describe()}: ${(err as Error).message}`);
  }
  return null;
}

function update(lamd: Lamd, args: unknown): null {
  const a = (args ?? {}) as { add?: unknown; remove?: unknown };
  if (a.add !== undefined && a.add !== null) {
    const problem = universeNodeProblem(a.add);
    if (problem) throw new LamError('BAD_ARGS', `universe-update: bad node (${problem})`);
    lamd.addNode(a.add as UniverseNode);
  }
  if (a.remove !== undefined && a.remove !== null) {
    if (!Number.isInteger(a.remove)) throw new LamError('BAD_ARGS', 'universe-update: bad node id');
    if (a.remove === lamd.nodeId) {
      setImmediate(() => void lamd.shutdown('removed from the universe (lamshrink)'));
    } else {
      lamd.removeNode(a.remove as number);
    }
  }
  return null;
}
