import { describeBootNode, wipeUniverse } from '@ssi/lam';
import { createCliContext, reportProblems } from '../cli-context';
import { UsageError } from '../run-command';

const USAGE = `usage: wipe [-v] [-d] [hostfile]
Takes down a universe by force, also after a lamd died: on every host of the boot schema it
stops the lamd of this session, kills what that lamd started and removes the session directory.`;

export async function main(argv: string[]): Promise<number> {
  const debug = argv.includes('-d');
  const ctx = createCliContext(debug ? [...argv, '--ssi', 'boot_verbose', '1000'] : argv);
  reportProblems(ctx);
  let verbose = debug;
  let hostfile: string | undefined;
  for (const arg of ctx.rest) {
    if (arg === '-v') verbose = true;
    else if (arg === '-d') continue;
    else if (arg === '-h' || arg === '--help') throw new UsageError(USAGE, 0);
    else if (arg.startsWith('-')) throw new UsageError(`unknown option ${arg}\n${USAGE}`);
    else if (hostfile) throw new UsageError(`only one boot schema, please`);
    else hostfile = arg;
  }
  const reports = await wipeUniverse({
    ssi: ctx,
    schemaFile: hostfile,
    debug,
    warn: (m) => process.stderr.write(`wipe: warning: ${m}\n`),
    verboseWrite: (l) => process.stderr.write(`${l}\n`),
  });
  for (const r of reports) {
    if (!r.ok) process.stderr.write(`wipe: ${describeBootNode(r.node)}: FAILED: ${r.message}\n`);
    else if (verbose) process.stdout.write(`${r.message}\n`);
  }
  return reports.every((r) => r.ok) ? 0 : 1;
}
