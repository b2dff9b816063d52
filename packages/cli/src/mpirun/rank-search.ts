import { dirname, isAbsolute, resolve } from 'node:path';
import type { JobPart } from './args';

/**
 * Where the ranks of `parts` will search for modules (mpi.ts: their working directory and their
 * program's directory): the trees mpirun scans once for them (`discoveryHandoverEnv`).
 */
export function rankSearchFrom(parts: readonly JobPart[], cwd = process.cwd()): string[] {
  const starts = new Set<string>([cwd]);
  for (const part of parts) {
    const wd = part.wd ? resolve(cwd, part.wd) : cwd;
    starts.add(wd);
    const program = part.argv[0];
    if (program) starts.add(dirname(isAbsolute(program) ? program : resolve(wd, program)));
  }
  return [...starts];
}
