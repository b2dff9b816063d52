import { existsSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { UsageError } from '../run-command';
import { esmEntryImport, mustRunAsEsm } from './ts-entry-format';

const JS = /\.(c|m)?js$/;
const TS = /\.(c|m)?ts$/;

/** tsx's loader, from this installation: TypeScript entry points run without a build step. */
function tsxLoader(): string {
  return import.meta.resolve('tsx');
}

/**
 * The argv a lamd starts for `program args`: JavaScript runs with this Node, TypeScript through
 * tsx, anything else as a command looked up on the node's PATH. Program files are made absolute
 * (relative to mpirun's directory) so -wd does not change which file runs.
 */
export function commandFor(argv: readonly string[], cwd: string): string[] {
  const [program, ...args] = argv as [string, ...string[]];
  const path = isAbsolute(program) ? program : resolve(cwd, program);
  const found = existsSync(path);
  const file = found ? path : program;
  if ((JS.test(program) || TS.test(program)) && !found) {
    throw new UsageError(
      `cannot find the program ${path}; give its path relative to this directory or absolute`,
      1,
    );
  }
  if (JS.test(program)) return [process.execPath, file, ...args];
  if (TS.test(program)) {
    const esm = mustRunAsEsm(file) ? ['--import', esmEntryImport(file)] : [];
    return [process.execPath, '--import', tsxLoader(), ...esm, file, ...args];
  }
  return [file, ...args];
}
