import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let root: string | undefined;

/** The directory of the installed @ssi/lam package (from any of its built or source files). */
export function lamPackageDir(): string {
  if (root) return root;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg)) {
      try {
        if (JSON.parse(readFileSync(pkg, 'utf8')).name === '@ssi/lam') {
          root = dir;
          return dir;
        }
      } catch {
        // keep looking
      }
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error('cannot find the @ssi/lam package directory');
    dir = parent;
  }
}

/** `dist/bin/<name>.js` of this installation: what runs `lamd` and `hboot` on this node. */
export function lamBin(name: 'lamd' | 'hboot'): string {
  return join(lamPackageDir(), 'dist', 'bin', `${name}.js`);
}

/** How to run a local copy of `hboot` (the origin node is started without a remote shell). */
export function localHbootCommand(): string[] {
  return [process.execPath, lamBin('hboot')];
}

export function lamVersion(): string {
  return String(JSON.parse(readFileSync(join(lamPackageDir(), 'package.json'), 'utf8')).version);
}
