import { describeNode, haltUniverse, LamClient } from '@ssi/lam';
import { createCliContext } from '../cli-context';
import { UsageError } from '../run-command';

const USAGE = `usage: lamhalt [-v] [-d]
Stops the LAM universe this node belongs to: every lamd stops the processes it started,
removes its session directory and exits. Nodes that do not answer are named (clean them up
with "wipe <hostfile>").`;

export async function main(argv: string[]): Promise<number> {
  const ctx = createCliContext(argv);
  let verbose = false;
  for (const arg of ctx.rest) {
    if (arg === '-v' || arg === '-d') verbose = true;
    else if (arg === '-h' || arg === '--help') throw new UsageError(USAGE, 0);
    else throw new UsageError(`unexpected argument ${arg}\n${USAGE}`);
  }
  const client = await LamClient.connect({ params: ctx.params, name: 'lamhalt' });
  const outcomes = await haltUniverse(client);
  client.close();
  const failed = outcomes.filter((o) => !o.ok);
  for (const f of failed) {
    process.stderr.write(`lamhalt: ${describeNode(f.node)} did not halt: ${f.error}\n`);
  }
  if (failed.length > 0) {
    process.stderr.write(
      'lamhalt: run "wipe <hostfile>" to clean up the nodes that did not halt\n',
    );
    return 1;
  }
  if (verbose) process.stderr.write(`lamhalt: LAM universe of ${outcomes.length} node(s) halted\n`);
  return 0;
}
