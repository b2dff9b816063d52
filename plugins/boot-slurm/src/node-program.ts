import { join } from 'node:path';
import { packageDirOf } from '@ssi/lam';

/** `dist/bin/slurm-lamd.js` of this installation: the program srun starts on each node. */
export function nodeProgram(): string {
  return join(packageDirOf('@ssi/boot-slurm', import.meta.url), 'dist', 'bin', 'slurm-lamd.js');
}
