import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SsiContext } from '@ssi/core';
import { createSsiContext } from '@ssi/core';
import { shareInstallationWithDropIns } from '@ssi/mpi/drop-in-peers';

/** The directory @ssi/cli is installed in: its node_modules tree is searched for modules. */
export function cliInstallDir(): string {
  // Built commands live in dist/bin/, two levels below the package root.
  return resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
}

/** Parameters and discovered modules as every command sees them. */
export function createCliContext(argv: readonly string[], stopAt?: number): SsiContext {
  const ctx = createSsiContext({ argv, stopAt, searchFrom: [process.cwd(), cliInstallDir()] });
  // Commands open modules too (laminfo, mpirun's settings check): drop-ins get our @ssi/* copies.
  shareInstallationWithDropIns(ctx.discovery.modules);
  return ctx;
}

/** Discovery problems are warnings: the rest of the installation still works. */
export function reportProblems(ctx: SsiContext, write = (s: string) => process.stderr.write(s)) {
  for (const p of ctx.discovery.problems) write(`warning: ${p.message}\n`);
}
