import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/**
 * Where `program` is (a path, or a name looked up on `PATH`), or undefined when it cannot be run
 * here: boot modules check their launcher (ssh, pbsdsh, srun) before starting anything.
 */
export function findProgram(program: string, env = process.env): string | undefined {
  const candidates = program.includes('/')
    ? [program]
    : (env.PATH ?? '')
        .split(delimiter)
        .filter(Boolean)
        .map((d) => join(d, program));
  return candidates.find((file) => {
    try {
      accessSync(file, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}
