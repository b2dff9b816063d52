import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';

/**
 * `npx create-ssi-plugin` before anything is published, for the tests: this package packed with
 * `pnpm pack`, then run with `npm exec` from that tarball alone, the @ssi scope's registry
 * pointed at a closed port so that any @ssi dependency it still had would fail here as it 404s
 * for a user.
 */
const pkgDir = resolve(import.meta.dirname, '..');

export function mustRun(cmd: string, args: string[], cwd: string) {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !/^npm_config_/i.test(k)),
  );
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', timeout: 180_000, env });
  if (r.error) throw new Error(`${cmd} ${args.join(' ')} in ${cwd}: ${r.error.message}`);
  if (r.status !== 0) {
    throw new Error(
      `${cmd} ${args.join(' ')} exited ${r.status ?? r.signal}:\n${r.stdout}\n${r.stderr}`,
    );
  }
  return r;
}

/** Packs this package into `work/tarballs` and returns the tarball's path. */
export function packScaffold(work: string): string {
  const tarballs = join(work, 'tarballs');
  mkdirSync(tarballs, { recursive: true });
  mustRun('pnpm', ['pack', '--pack-destination', tarballs], pkgDir);
  const [tarball] = readdirSync(tarballs).filter((f) => f.startsWith('create-ssi-plugin-'));
  if (!tarball) throw new Error(`pnpm pack of ${pkgDir} left no tarball in ${tarballs}`);
  return join(tarballs, tarball);
}

/** Runs `create-ssi-plugin <args>` from `tarball` with npm exec, in `cwd`. */
export function scaffoldFromTarball(tarball: string, cwd: string, args: string[]) {
  mkdirSync(cwd, { recursive: true });
  return mustRun(
    'npm',
    [
      'exec',
      '--yes',
      `--package=${tarball}`,
      '--@ssi:registry=http://127.0.0.1:9/',
      '--',
      'create-ssi-plugin',
      ...args,
    ],
    cwd,
  );
}
