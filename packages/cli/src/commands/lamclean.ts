import { cleanUniverse, describeNode, LamClient } from '@ssi/lam';
import { createCliContext } from '../cli-context';
import { UsageError } from '../run-command';

const USAGE = `usage: lamclean [-v]
Cleans the universe without halting it: every lamd stops the processes it started and drops
messages nobody received (and resources registered for session cleanup).`;

export async function main(argv: string[]): Promise<number> {
  const ctx = createCliContext(argv);
  let verbose = false;
  for (const arg of ctx.rest) {
    if (arg === '-v') verbose = true;
    else if (arg === '-h' || arg === '--help') throw new UsageError(USAGE, 0);
    else throw new UsageError(`unexpected argument ${arg}\n${USAGE}`);
  }
  const client = await LamClient.connect({ params: ctx.params, name: 'lamclean' });
  try {
    const outcomes = await cleanUniverse(client);
    for (const o of outcomes) {
      if (!o.ok) process.stderr.write(`lamclean: ${describeNode(o.node)}: ${o.error}\n`);
      else if (verbose) {
        process.stdout.write(
          `${describeNode(o.node)}: ${o.value!.killed} process(es) stopped, ${o.value!.messages} message(s) dropped\n`,
        );
      }
    }
    return outcomes.every((o) => o.ok) ? 0 : 1;
  } finally {
    client.close();
  }
}
