import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

const repo = resolve(import.meta.dirname, '../../..');

function newest(dir: string): number {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}

/**
 * The jobs these tests start are real Node processes that import the built packages: @ssi/mpi
 * itself and @ssi/rpi-tcp (found through the root node_modules, which lists it as a dev
 * dependency; it cannot be a dependency of @ssi/mpi, which it depends on). Build whichever is
 * missing or older than its sources.
 */
export default function setup(): void {
  for (const pkg of ['packages/mpi', 'plugins/rpi-tcp']) {
    const dir = join(repo, pkg);
    const dist = join(dir, 'dist', 'index.js');
    if (existsSync(dist) && statSync(dist).mtimeMs >= newest(join(dir, 'src'))) continue;
    execFileSync(join(repo, 'node_modules', '.bin', 'tsup'), [], { cwd: dir, stdio: 'pipe' });
  }
}
