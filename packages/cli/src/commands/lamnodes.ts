import { formatNodeLine, LamClient, resolveNodeSpec, takeNodeSpec } from '@ssi/lam';
import { createCliContext } from '../cli-context';
import { UsageError } from '../run-command';

const USAGE = `usage: lamnodes [--json] [N | C | n0-3,5 | c0-7]...
Lists the nodes of the LAM universe as the local lamd knows them:
  n<id>  <name>:<cpus>:<flags>      flags: origin, this_node, no_schedule`;

export async function main(argv: string[]): Promise<number> {
  const ctx = createCliContext(argv);
  const json = ctx.rest.includes('--json');
  const words = ctx.rest.filter((a) => a !== '--json');
  if (words.includes('-h') || words.includes('--help')) throw new UsageError(USAGE, 0);
  const { items, rest } = takeNodeSpec(words);
  if (rest.length > 0) throw new UsageError(`"${rest[0]}" is not a node list\n${USAGE}`);
  const client = await LamClient.connect({ params: ctx.params, name: 'lamnodes' });
  try {
    const universe = await client.universe();
    const picked =
      items.length === 0
        ? universe
        : resolveNodeSpec(items, universe, { includeUnschedulable: true });
    const nodes = [...new Set(picked)];
    if (json) process.stdout.write(`${JSON.stringify(nodes, null, 2)}\n`);
    else process.stdout.write(nodes.map((n) => `${formatNodeLine(n, client.node)}\n`).join(''));
    return 0;
  } finally {
    client.close();
  }
}
