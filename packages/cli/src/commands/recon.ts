import { describeBootNode, reconUniverse } from '@ssi/lam';
import { createCliContext, reportProblems } from '../cli-context';
import { UsageError } from '../run-command';

const USAGE = `usage: recon [-v] [-d] [hostfile]
A dry run of lamboot: starts the installation's hboot on every host of the boot schema through
the boot module (no lamd, no rendezvous) and reports, host by host, whether a boot would work.`;

export async function main(argv: string[]): Promise<number> {
  const debug = argv.includes('-d');
  const ctx = createCliContext(debug ? [...argv, '--ssi', 'boot_verbose', '1000'] : argv);
  reportProblems(ctx);
  let hostfile: string | undefined;
  for (const arg of ctx.rest) {
    if (arg === '-v' || arg === '-d') continue;
    if (arg === '-h' || arg === '--help') throw new UsageError(USAGE, 0);
    if (arg.startsWith('-')) throw new UsageError(`unknown option ${arg}\n${USAGE}`);
    if (hostfile) throw new UsageError(`only one boot schema, please`);
    hostfile = arg;
  }
  const reports = await reconUniverse({
    ssi: ctx,
    schemaFile: hostfile,
    debug,
    warn: (m) => process.stderr.write(`recon: warning: ${m}\n`),
    verboseWrite: (l) => process.stderr.write(`${l}\n`),
  });
  for (const r of reports) {
    const line = `${describeBootNode(r.node)}: ${r.ok ? 'ok' : `FAILED: ${r.message}`}\n`;
    (r.ok ? process.stdout : process.stderr).write(line);
  }
  const bad = reports.filter((r) => !r.ok).length;
  process.stdout.write(
    bad === 0
      ? `recon: all ${reports.length} node(s) can be booted\n`
      : `recon: ${bad} of ${reports.length} node(s) cannot be booted\n`,
  );
  return bad === 0 ? 0 : 1;
}
