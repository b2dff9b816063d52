import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The directory of the installed package named `name`, found upward from this file. */
export function packageDir(name: string, from = import.meta.url): string {
  let dir = dirname(fileURLToPath(from));
  for (;;) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg)) {
      try {
        if (JSON.parse(readFileSync(pkg, 'utf8')).name === name) return dir;
      } catch {
        // keep looking
      }
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`cannot find the ${name} package directory`);
    dir = parent;
  }
}

/** `dist/bin/slurm-lamd.js`: the program srun starts on each node. */
export function nodeProgram(): string {
  return join(packageDir('@ssi/boot-slurm'), 'dist', 'bin', 'slurm-lamd.js');
}
