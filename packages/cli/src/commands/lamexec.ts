import { constants } from 'node:os';
import {
  type ExitStatus,
  isNodeSpec,
  LamClient,
  type RemoteProcess,
  resolveNodeSpec,
  takeNodeSpec,
  type UniverseNode,
} from '@ssi/lam';
import { createCliContext } from '../cli-context';
import { UsageError } from '../run-command';

const USAGE = `usage: lamexec [-v] [N | C | n0-3,5 | c0-7]... command [args...]
Runs a (non-MPI) program on nodes of the universe and forwards its output here. Nodes default
to N (every schedulable node); C runs one copy per CPU. The exit status is 0 when every copy
exits 0, else that of the first copy (in node order) that failed.`;

export async function main(argv: string[]): Promise<number> {
  const ctx = createCliContext(argv, commandStart(argv));
  let verbose = false;
  let i = 0;
  for (; i < ctx.rest.length && ctx.rest[i]!.startsWith('-') && !isNodeSpec(ctx.rest[i]!); i++) {
    const arg = ctx.rest[i]!;
    if (arg === '-v') verbose = true;
    else if (arg === '-h' || arg === '--help') throw new UsageError(USAGE, 0);
    else if (arg === '--') {
      i++;
      break;
    } else throw new UsageError(`unknown option ${arg}\n${USAGE}`);
  }
  const { items, rest: command } = takeNodeSpec(ctx.rest.slice(i));
  if (command.length === 0) throw new UsageError(`which command?\n${USAGE}`);
  const client = await LamClient.connect({ params: ctx.params, name: 'lamexec' });
  try {
    const universe = await client.universe();
    const nodes = resolveNodeSpec(items.length ? items : [{ kind: 'all-nodes' }], universe);
    if (nodes.length === 0) throw new UsageError('no schedulable node to run on (see lamnodes)', 1);
    const procs = await startAll(client, nodes, command);
    if (verbose) process.stderr.write(`lamexec: started ${procs.length} process(es)\n`);
    return await waitAll(procs);
  } finally {
    client.close();
  }
}

/** Index of the program in argv: after options, --ssi settings and node lists. */
function commandStart(argv: string[]): number {
  let i = 0;
  while (i < argv.length) {
    const a = argv[i]!;
    if (a === '--ssi' || a === '-ssi') i += 3;
    else if (a === '--') return i + 1;
    else if (a.startsWith('-') || isNodeSpec(a)) i++;
    else break;
  }
  return i;
}

/** Starts every copy; if one cannot start, the others are stopped and the error is thrown. */
async function startAll(client: LamClient, nodes: UniverseNode[], argv: string[]) {
  // Listeners go on in the continuation of each spawn: a RemoteProcess replays the output that
  // raced ahead of its spawn answer only until then.
  const settled = await Promise.allSettled(
    nodes.map(async (n) => {
      const p = await client.spawn(n.id, { argv, cwd: process.cwd() });
      p.on('stdout', (d: Buffer) => process.stdout.write(d));
      p.on('stderr', (d: Buffer) => process.stderr.write(d));
      return p;
    }),
  );
  const procs = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) {
    await Promise.allSettled(procs.map((p) => p.kill('SIGKILL')));
    throw failed.reason;
  }
  return procs;
}

/**
 * Waits for every copy. Ctrl-C (or SIGTERM) is passed on to all of them; a lost lamd fails the
 * whole run and stops the remaining copies, so nothing is left running.
 */
async function waitAll(procs: RemoteProcess[]): Promise<number> {
  const forward = (sig: NodeJS.Signals) => () => {
    for (const p of procs) void p.kill(sig).catch(() => {});
  };
  const onInt = forward('SIGINT');
  const onTerm = forward('SIGTERM');
  process.on('SIGINT', onInt);
  process.on('SIGTERM', onTerm);
  try {
    const results = await Promise.allSettled(procs.map((p) => p.exited));
    const lost = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (lost) {
      await Promise.allSettled(procs.filter((p) => !p.status).map((p) => p.kill('SIGKILL')));
      throw lost.reason;
    }
    const statuses = results.map((r) => (r as PromiseFulfilledResult<ExitStatus>).value);
    const firstBad = statuses.findIndex((s) => s.code !== 0);
    if (firstBad < 0) return 0;
    const s = statuses[firstBad]!;
    const p = procs[firstBad]!;
    const how = s.signal ? `was killed by ${s.signal}` : `exited with ${s.code}`;
    process.stderr.write(`lamexec: process ${p.pid} on n${p.node} ${how}\n`);
    return s.signal ? 128 + (constants.signals[s.signal as NodeJS.Signals] ?? 0) : (s.code ?? 1);
  } finally {
    process.off('SIGINT', onInt);
    process.off('SIGTERM', onTerm);
  }
}
