import { describeNode, LamClient, parseNodeId, shrinkUniverse } from '@ssi/lam';
import { createCliContext } from '../cli-context';
import { UsageError } from '../run-command';

const USAGE = `usage: lamshrink [-v] nodeid
Removes a node from the universe (n3 or 3): every lamd forgets it, and its lamd halts.
Run it on another node of the universe.`;

export async function main(argv: string[]): Promise<number> {
  const ctx = createCliContext(argv);
  let verbose = false;
  const ids: number[] = [];
  for (const arg of ctx.rest) {
    if (arg === '-v') verbose = true;
    else if (arg === '-h' || arg === '--help') throw new UsageError(USAGE, 0);
    else if (arg.startsWith('-')) throw new UsageError(`unknown option ${arg}\n${USAGE}`);
    else ids.push(parseNodeId(arg));
  }
  if (ids.length !== 1) throw new UsageError(`give exactly one node id\n${USAGE}`);
  const client = await LamClient.connect({ params: ctx.params, name: 'lamshrink' });
  try {
    const outcomes = await shrinkUniverse(client, ids[0]!);
    const failed = outcomes.filter((o) => !o.ok);
    for (const f of failed) {
      process.stderr.write(
        `lamshrink: ${describeNode(f.node)} did not take the change: ${f.error}\n`,
      );
    }
    if (verbose) process.stderr.write(`lamshrink: n${ids[0]} removed\n`);
    return failed.length > 0 ? 1 : 0;
  } finally {
    client.close();
  }
}
