// Compiles a package's native addon with node-gyp (no prebuilt binary is ever downloaded): the
// install and build step of SSI packages that have one (`@ssi/shm`, `@ssi/sockopt`, `@ssi/sched`). Plain
// JavaScript, not built, so that it runs at install time before anything is compiled.
//
// node-gyp is taken from, in order: $npm_config_node_gyp, the node-gyp bundled with the running
// package manager (pnpm and npm both ship one), `node-gyp` on PATH. Node's headers: when the
// running node sits next to an include/node directory (e.g. /usr/bin/node -> /usr/include/node)
// that directory is passed as --nodedir, so nothing is fetched from the network.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

function findNodeGyp() {
  const candidates = [];
  if (process.env.npm_config_node_gyp) candidates.push(process.env.npm_config_node_gyp);
  const execPath = process.env.npm_execpath; // pnpm.cjs or npm-cli.js of the running manager
  if (execPath) {
    const d = dirname(execPath);
    candidates.push(join(d, 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'));
    candidates.push(join(d, '..', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'));
  }
  const prefix = resolve(dirname(process.execPath), '..');
  for (const mgr of ['pnpm/dist', 'npm']) {
    candidates.push(
      join(prefix, 'lib', 'node_modules', mgr, 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'),
    );
  }
  for (const c of candidates) if (c.endsWith('.js') && existsSync(c)) return [process.execPath, c];
  return ['node-gyp'];
}

/**
 * Builds `build/Release/<addon>.node` in `pkgDir`. `argv`: `--if-missing` skips the build when
 * the addon exists. Returns whether the addon is there afterwards; on failure it says what the
 * build needs (the caller decides whether that is fatal).
 */
export function buildNativeAddon({ pkgDir, packageName, addon, argv = [] }) {
  const file = join(pkgDir, 'build', 'Release', `${addon}.node`);
  if (argv.includes('--if-missing') && existsSync(file)) return true;
  const [cmd, ...pre] = findNodeGyp();
  const gypArgs = ['rebuild'];
  const headers = resolve(dirname(process.execPath), '..', 'include', 'node', 'node_api.h');
  if (!process.env.npm_config_nodedir && existsSync(headers)) {
    gypArgs.push(`--nodedir=${resolve(dirname(process.execPath), '..')}`);
  }
  const r = spawnSync(cmd, [...pre, ...gypArgs], { cwd: pkgDir, stdio: 'inherit' });
  if (r.status === 0) return true;
  console.error(
    `${packageName}: building the native addon failed (${cmd} ${[...pre, ...gypArgs].join(' ')}).\n` +
      'It needs a C++ compiler (g++), make and python3, plus Node headers ' +
      '(include/node next to the node binary, or --nodedir / npm_config_nodedir).',
  );
  return false;
}
