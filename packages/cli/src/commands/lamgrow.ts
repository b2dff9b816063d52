import { describeNode, growUniverse } from '@ssi/lam';
import { createCliContext, reportProblems } from '../cli-context';
import { UsageError } from '../run-command';

const USAGE = `usage: lamgrow [-v] [-d] [-n nodeid] [-c cpus] host [key=value]...
Boots one more node into the running universe (through the selected boot module) and tells
every lamd about it. Runs on a node of the universe. key=value words are those of a boot
schema line: cpu=2, prefix=/opt/ssi, user=alice, schedule=no.`;

export async function main(argv: string[]): Promise<number> {
  const debug = argv.includes('-d');
  const ctx = createCliContext(debug ? [...argv, '--ssi', 'boot_verbose', '1000'] : argv);
  reportProblems(ctx);
  let verbose = debug;
  let host: string | undefined;
  const words: string[] = [];
  let nodeId: number | undefined;
  const count = (flag: string, value: string | undefined, min: number) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min)
      throw new UsageError(`${flag} needs a whole number >= ${min}\n${USAGE}`);
    return n;
  };
  for (let i = 0; i < ctx.rest.length; i++) {
    const arg = ctx.rest[i]!;
    if (arg === '-v') verbose = true;
    else if (arg === '-d') continue;
    else if (arg === '-n') nodeId = count('-n', ctx.rest[++i]?.replace(/^n/, ''), 0);
    else if (arg === '-c') words.push(`cpu=${count('-c', ctx.rest[++i], 1)}`);
    else if (host && arg.includes('=')) words.push(arg);
    else if (arg === '-h' || arg === '--help') throw new UsageError(USAGE, 0);
    else if (arg.startsWith('-')) throw new UsageError(`unknown option ${arg}\n${USAGE}`);
    else if (host) throw new UsageError(`one host at a time (got ${host} and ${arg})`);
    else host = arg;
  }
  if (!host) throw new UsageError(`which host?\n${USAGE}`);
  const say = (line: string) => process.stderr.write(`${line}\n`);
  const node = await growUniverse({
    ssi: ctx,
    host,
    words,
    nodeId,
    debug,
    warn: (m) => say(`lamgrow: warning: ${m}`),
    verboseWrite: say,
  });
  if (verbose) say(`lamgrow: ${describeNode(node)} joined the universe`);
  return 0;
}
