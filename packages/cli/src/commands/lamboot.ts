import { bootUniverse, describeBootNode } from '@ssi/lam';
import { createCliContext, reportProblems } from '../cli-context';
import { UsageError } from '../run-command';

const USAGE = `usage: lamboot [-v] [-d] [--ssi name value]... [hostfile]
Boots a LAM universe: one lamd on every host of the boot schema (default: $LAMBHOST, else
this host alone). Must run on one of those hosts (LAM_MPI_SESSION_HOST names this host when
its schema name differs from its host name).
  -v   one line per node as it joins, and a summary
  -d   debug: the boot framework's verbose output; lamds log debug lines
Parameters (laminfo --param boot all): boot, boot_base_algorithm, boot_base_linear_win_size,
boot_base_timeout, boot_rsh_agent, ...`;

/** Boots longer than this show progress even without -v. */
const LONG_BOOT_MS = 2000;

export async function main(argv: string[]): Promise<number> {
  const debug = argv.includes('-d');
  const ctx = createCliContext(debug ? [...argv, '--ssi', 'boot_verbose', '1000'] : argv);
  const args = parseArgs(ctx.rest);
  reportProblems(ctx);
  const say = (line: string) => process.stderr.write(`${line}\n`);
  const held: string[] = [];
  let live = args.verbose || debug;
  const timer = setTimeout(() => {
    live = true;
    for (const line of held.splice(0)) say(line);
  }, LONG_BOOT_MS);
  const started = Date.now();
  try {
    const report = await bootUniverse({
      ssi: ctx,
      schemaFile: args.hostfile,
      debug,
      warn: (m) => say(`lamboot: warning: ${m}`),
      verboseWrite: say,
      onNode: (node, _outcome, done, total) => {
        const line = `lamboot: ${describeBootNode(node)} joined (${done}/${total})`;
        if (live) say(line);
        else held.push(line);
      },
    });
    if (args.verbose || debug) {
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      say(
        `lamboot: universe of ${report.universe.length} node(s) booted with the ${report.module} boot module in ${seconds} s (session directory ${report.sessionDir})`,
      );
    }
    return 0;
  } finally {
    clearTimeout(timer);
  }
}

function parseArgs(rest: string[]): { verbose: boolean; hostfile?: string } {
  const out: { verbose: boolean; hostfile?: string } = { verbose: false };
  for (const arg of rest) {
    if (arg === '-v') out.verbose = true;
    else if (arg === '-d') continue;
    else if (arg === '-h' || arg === '--help') throw new UsageError(USAGE, 0);
    else if (arg.startsWith('-')) throw new UsageError(`unknown option ${arg}\n${USAGE}`);
    else if (out.hostfile)
      throw new UsageError(`only one boot schema, please (got ${out.hostfile} and ${arg})`);
    else out.hostfile = arg;
  }
  return out;
}
