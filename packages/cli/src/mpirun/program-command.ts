import { existsSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { UsageError } from '../run-command';
import { compileTsEntry, type TsEntry } from './ts-entry';
import { esmEntryImport, mustRunAsEsm } from './ts-entry-format';

const JS = /\.(c|m)?js$/;
const TS = /\.(c|m)?ts$/;

/** tsx's loader, from this installation: TypeScript entry points run without a build step. */
function tsxLoader(): string {
  return import.meta.resolve('tsx');
}

/**
 * Node options of JavaScript ranks on mpirun's own node (a start-up snapshot: see
 * startup-snapshot.ts; a file of this node, which another node may not have).
 */
let rankNodeArgs: readonly string[] = [];

export function setRankNodeArgs(args: readonly string[]): void {
  rankNodeArgs = args;
}

/** TypeScript entries of this mpirun compiled by `compileTsPrograms`, by absolute path. */
const compiled = new Map<string, TsEntry>();

/**
 * Compiles each TypeScript program of `programs` once for the job (see ts-entry.ts), so that
 * `commandFor` starts its ranks on JavaScript; `SSI_MPIRUN_TS=tsx` keeps tsx in every rank.
 * Returns why each one that still needs tsx does (for mpirun -v).
 */
export async function compileTsPrograms(
  programs: readonly (readonly string[])[],
  cwd: string,
): Promise<string[]> {
  const notes: string[] = [];
  if (process.env.SSI_MPIRUN_TS === 'tsx') return notes;
  for (const [program] of programs) {
    if (!program || !TS.test(program)) continue;
    const path = isAbsolute(program) ? program : resolve(cwd, program);
    if (compiled.has(path) || !existsSync(path)) continue;
    const entry = await compileTsEntry(path);
    compiled.set(path, entry);
    if ('tsx' in entry)
      notes.push(`mpirun: ${program} runs through tsx in every rank: ${entry.tsx}`);
  }
  return notes;
}

/**
 * The argv a lamd starts for `program args`: JavaScript runs with this Node, TypeScript compiled
 * for the job (`compileTsPrograms`) or else through tsx, anything else as a command looked up on
 * the node's PATH. Program files are made absolute (relative to mpirun's directory) so -wd does
 * not change which file runs.
 */
export function commandFor(argv: readonly string[], cwd: string, onThisNode = true): string[] {
  const nodeArgs = onThisNode ? rankNodeArgs : [];
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
  if (JS.test(program)) return [process.execPath, ...nodeArgs, file, ...args];
  const js = compiled.get(path);
  if (js && 'file' in js) {
    return [process.execPath, ...nodeArgs, '--enable-source-maps', js.file, ...args];
  }
  if (TS.test(program)) {
    // Not compiled for the job (see compileTsPrograms): tsx in every rank, as an ES module where
    // CommonJS cannot run it (top-level await outside a "type": "module" package).
    const esm = mustRunAsEsm(file) ? ['--import', esmEntryImport(file)] : [];
    return [process.execPath, '--import', tsxLoader(), ...esm, file, ...args];
  }
  return [file, ...args];
}
