import { join } from 'node:path';
import { packageDirOf } from '@ssi/lam';

/** `dist/bin/tm-lamd.js` of this installation: the program PBS starts on each node. */
export function nodeProgram(): string {
  return join(packageDirOf('@ssi/boot-tm', import.meta.url), 'dist', 'bin', 'tm-lamd.js');
}
