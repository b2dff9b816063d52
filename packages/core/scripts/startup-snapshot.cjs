// The entry of a start-up snapshot of SSI's bundles (`@ssi/core/startup-snapshot`; issue 21):
//
//   SSI_SNAPSHOT_PACKAGES='[{"name":"@ssi/core","dist":"/abs/core/dist"}, ...]' \
//     node --snapshot-blob <blob> --build-snapshot startup-snapshot.cjs
//
// builds a V8 start-up snapshot (Node 20's user-land snapshot) in which the start-up bundles of
// those packages (dependencies first) are loaded and have run; `node --snapshot-blob <blob>
// program.mjs args` then starts with them in its heap and runs `program.mjs` as `node
// program.mjs args` would. A rank so started skips reading, compiling and running the bundles
// (measured 80 -> 65 ms of CPU per rank at np 16, 87 -> 75 at np 64 on two CPUs:
// docs/architecture.md). Nothing of the bundles' top
// level reads per-process state (environment, pid, host, clocks), which the snapshot would keep
// from the build: the test of the snapshot checks that. Plain CommonJS, not built.
'use strict';
const { readFileSync } = require('node:fs');
const { isAbsolute, join, resolve } = require('node:path');
const { Script } = require('node:vm');
const { startupSnapshot } = require('node:v8');

const PACKAGES_ENV = 'SSI_SNAPSHOT_PACKAGES';

function packagesToLoad() {
  let packages;
  try {
    packages = JSON.parse(process.env[PACKAGES_ENV] ?? '');
  } catch {
    throw new Error(`${PACKAGES_ENV} must be a JSON list of { name, dist }`);
  }
  const ok =
    Array.isArray(packages) &&
    packages.every((p) => typeof p?.name === 'string' && typeof p?.dist === 'string');
  if (!ok) throw new Error(`${PACKAGES_ENV} must be a JSON list of { name, dist }`);
  return packages;
}

/**
 * The bundle loader, run as a script: a builder may use Node's built-in modules only (no
 * user-land `require`), and the loader registers itself on `globalThis` for every door.
 */
function runLoader() {
  const file = join(__dirname, 'bundle-loader.cjs');
  const wrapped = `(function (exports, require, module) {${readFileSync(file, 'utf8')}\n})`;
  const loader = { exports: {} };
  new Script(wrapped, { filename: file }).runInThisContext()(loader.exports, require, loader);
  return loader.exports;
}

runLoader().preloadForSnapshot(packagesToLoad(), require);
/**
 * `--snapshot-blob <file>` (or `=<file>`) out of `process.execArgv`: the program's own Node
 * processes (`fork`, `spawn(process.execPath, [...process.execArgv, ...])`, which may run `-e`
 * code or another program) start as plain `node`, as they would had the rank not been started
 * from the snapshot, whose main function runs a program file only.
 */
function forgetSnapshotFlag(execArgv) {
  for (let i = execArgv.length - 1; i >= 0; i--) {
    if (execArgv[i] === '--snapshot-blob') execArgv.splice(i, 2);
    else if (execArgv[i].startsWith('--snapshot-blob=')) execArgv.splice(i, 1);
  }
}

startupSnapshot.setDeserializeMainFunction(() => {
  forgetSnapshotFlag(process.execArgv);
  // Node makes a relative program path absolute before it runs the program, but not for a main
  // function of a snapshot (where `runMain('app.mjs')` would look for a package of that name).
  const program = process.argv[1];
  if (program && !isAbsolute(program)) process.argv[1] = resolve(program);
  // Node's own entry point: ES module or CommonJS, resolved as `node program` would.
  require('node:module').runMain(process.argv[1]);
});
