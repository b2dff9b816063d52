import { describeNode, LamClient, resolveNodeSpec, takeNodeSpec } from '@ssi/lam';
import { createCliContext } from '../cli-context';
import { UsageError } from '../run-command';

const USAGE = `usage: tping [-c count] [N | n0-3,5]...
Pings lamds through the universe: each answer comes from the lamd's main loop. Default: every
node once. Exits 1 if a lamd did not answer (within lam_client_timeout).`;

export async function main(argv: string[]): Promise<number> {
  const ctx = createCliContext(argv);
  let count = 1;
  const words: string[] = [];
  for (let i = 0; i < ctx.rest.length; i++) {
    const arg = ctx.rest[i]!;
    if (arg === '-c') {
      const n = Number(ctx.rest[++i]);
      if (!Number.isInteger(n) || n < 1)
        throw new UsageError(`-c needs a positive count\n${USAGE}`);
      count = n;
    } else if (arg === '-h' || arg === '--help') throw new UsageError(USAGE, 0);
    else words.push(arg);
  }
  const { items, rest } = takeNodeSpec(words);
  if (rest.length > 0) throw new UsageError(`"${rest[0]}" is not a node list\n${USAGE}`);
  const client = await LamClient.connect({ params: ctx.params, name: 'tping' });
  try {
    const universe = await client.universe();
    const targets = [
      ...new Set(
        items.length === 0
          ? universe
          : resolveNodeSpec(items, universe, { includeUnschedulable: true }),
      ),
    ];
    let failed = 0;
    for (let round = 1; round <= count; round++) {
      const results = await Promise.allSettled(targets.map((n) => client.ping(n.id)));
      const parts: string[] = [];
      results.forEach((r, i) => {
        const node = targets[i]!;
        if (r.status === 'fulfilled') parts.push(`n${node.id} ${r.value.rttMs.toFixed(2)} ms`);
        else {
          failed++;
          process.stderr.write(
            `tping: ${describeNode(node)} did not answer: ${(r.reason as Error).message}\n`,
          );
        }
      });
      const ok = results.filter((r) => r.status === 'fulfilled').length;
      process.stdout.write(
        `round ${round}: ${ok} of ${targets.length} lamd(s) answered (${parts.join(', ')})\n`,
      );
    }
    return failed > 0 ? 1 : 0;
  } finally {
    client.close();
  }
}
