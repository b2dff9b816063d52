import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const roots = new Map<string, string>();

/**
 * The directory of the installed package `name`, found upward from the file at `fromUrl`
 * (`import.meta.url` of a file of that package, built or source). Boot modules use it to name the
 * programs they have started on other nodes.
 */
export function packageDirOf(name: string, fromUrl: string): string {
  const known = roots.get(name);
  if (known) return known;
  let dir = dirname(fileURLToPath(fromUrl));
  for (;;) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg)) {
      try {
        if (JSON.parse(readFileSync(pkg, 'utf8')).name === name) {
          roots.set(name, dir);
          return dir;
        }
      } catch {
        // keep looking
      }
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`cannot find the ${name} package directory`);
    dir = parent;
  }
}

/** The directory of the installed @ssi/lam package (from any of its built or source files). */
export function lamPackageDir(): string {
  return packageDirOf('@ssi/lam', import.meta.url);
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
