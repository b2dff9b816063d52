// The loader of SSI packages' start-up bundles (`@ssi/core/bundle-loader`; why: see
// bundle-dist.mjs). Each bundled package's dist has a door, `ssi-load.cjs` (two lines, written by
// bundle-dist), that hands this loader the package's directory and an `import()` of its own; the
// package's ES module files there are façades that open the door with `createRequire` (not an
// `import`, which would run Node's CommonJS export scanner) and re-export their part of the
// package's `ssi-bundle.cjs`. Plain CommonJS, not built.
//
// - One copy of each bundle per process: loaded bundles are kept on `globalThis` under a
//   `Symbol.for` key, by real path, so that two installations' copies of this loader still share
//   them. A bundle's `require('@ssi/<name>')` of another package with a bundle gets that
//   package's loaded copy (through that package's door), the object its façades export.
// - `import()` in a bundle (rewritten to `__ssiI()` by bundle-dist) is its door's, so a bare
//   specifier resolves from the bundle's directory, as it did from the files it replaces, and no
//   experimental vm feature is needed.
// - A V8 code cache per bundle: the bundle is compiled as a `vm.Script` with the cached data of an
//   earlier run. When there was none, or V8 rejected it (another Node, other V8 flags), the
//   process writes a new one at once (measured as fast as one written after the run, and a rank
//   killed at an abort still leaves it). The cache lives beside the package's `dist`, in
//   `<package>/.ssi-code-cache` (mode 0700; outside `dist`, so it is never packed), where it
//   goes with the checkout or installation it belongs to instead of piling up in /tmp; used
//   only when the package directory and the cache are the user's and no one else may write to
//   them (a package installed by another user: no cache unless `SSI_CODE_CACHE` names a
//   directory). `SSI_CODE_CACHE=off` turns the cache off.
'use strict';
const {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeFileSync,
} = require('node:fs');
const { basename, dirname, join } = require('node:path');
const { Script } = require('node:vm');

const BUNDLE = 'ssi-bundle.cjs';
const DOOR = 'ssi-load.cjs';
/** The key of a package's `index.js` in its bundle's exports. */
const INDEX = 'index.js';
const REGISTRY = Symbol.for('@ssi/start-up-bundles');
const DOORS = Symbol.for('@ssi/start-up-bundles.doors');
const LOADER = Symbol.for('@ssi/start-up-bundles.loader');
const IMPORTERS = Symbol.for('@ssi/start-up-bundles.importers');
/** @type {Map<string, { exports: Record<string, Record<string, unknown>>, codeCache: string }>} */
const loaded = globalThis[REGISTRY] ?? new Map();
globalThis[REGISTRY] = loaded;
/**
 * The first door opened for each package name: one copy of `@ssi/<name>` per process, as
 * DESIGN.md asks, and no resolution (a package.json read and a real path per call) when a
 * bundle requires a package whose door is open.
 */
const doors = globalThis[DOORS] ?? new Map();
globalThis[DOORS] = doors;
// Doors of any installation find this loader here instead of resolving @ssi/core each.
globalThis[LOADER] ??= module.exports;
/**
 * The `import()` of each bundle's door, by bundle file, as opened in this process: a bundle's
 * `__ssiI` calls the latest one. A bundle loaded into a start-up snapshot (below) was given a
 * door of the build, which cannot import; once the process runs, its own door (when a façade of
 * the package opens it) or any door opened in the process (absolute URLs resolve the same from
 * anywhere) imports instead.
 */
const importers = globalThis[IMPORTERS] ?? new Map();
globalThis[IMPORTERS] = importers;
const ANY = '*';
/** Set while `preloadForSnapshot` runs: no user-land module loader exists then (see there). */
let building;

/**
 * The door of the package whose dist directory is `dist`: `load()` gives the exports of its
 * bundle, keyed by the dist-relative path of each ES module file the bundle replaces
 * (`index.js`, `chunk-ABC.js`); `importHere` is an `import()` made in that directory.
 */
function door(dist, importHere, name) {
  const file = join(dist, BUNDLE);
  if (!building) {
    importers.set(file, importHere);
    if (!importers.has(ANY)) importers.set(ANY, importHere);
  }
  const opened = { load: () => load(file, importHere) };
  if (name && !doors.has(name)) doors.set(name, opened);
  return opened;
}

/** The exports of the bundle `file`, loading it once per process. */
function load(file, importHere) {
  const known = loaded.get(file);
  if (known) return known.exports;
  // `codeCache` says what became of the cache (tests, diagnostics): off, written, used, rejected.
  const module = { exports: {}, codeCache: 'off', inSnapshot: building !== undefined };
  loaded.set(file, module);
  const source = readFileSync(file, 'utf8');
  const cache = codeCacheOf(file, source.length);
  const cachedData = cache?.read();
  const wrapped = `(function (exports, require, module, __filename, __dirname, __ssiI) {${source}\n})`;
  let script;
  if (cache && !cachedData) {
    script = compileEagerly(wrapped, file);
    cache.write(script.createCachedData());
    module.codeCache = 'written';
  } else {
    script = new Script(wrapped, { filename: file, cachedData });
    // V8 keeps the lazy compilation of this source under this name: the eager one, for the
    // cache only, under another (V8 checks a cache against the source, not the name).
    if (script.cachedDataRejected) {
      cache?.write(compileEagerly(wrapped, `${file} (code cache)`).createCachedData());
      module.codeCache = 'rejected';
    } else if (cache) {
      module.codeCache = 'used';
    }
  }
  try {
    const run = script.runInThisContext();
    const importNow = (specifier) =>
      (importers.get(file) ?? importers.get(ANY) ?? importHere)(specifier);
    run(module.exports, requireFrom(file), module, file, dirname(file), importNow);
  } catch (error) {
    loaded.delete(file);
    throw error;
  }
  return module.exports;
}

/**
 * Compiles every function of the bundle now (V8's --no-lazy for this one compilation), so that
 * its code cache holds them all: a process that loads the cache compiles nothing of the bundle
 * again, also not the code a first message to a new peer runs (cold, that took ~1 ms per step of
 * the connection set-up in each process). The flag is set back before the cache is made, so V8
 * accepts the cache in processes without it.
 */
function compileEagerly(wrapped, file) {
  const v8 = require('node:v8');
  v8.setFlagsFromString('--no-lazy');
  try {
    return new Script(wrapped, { filename: file });
  } finally {
    v8.setFlagsFromString('--lazy');
  }
}

/**
 * What the ES module file `file` exports when it is a façade of a bundle this process has loaded
 * already (a start-up snapshot's): its part of the bundle, without Node's ES module loader, whose
 * resolution, package.json reads and compilation of the façade cost ~1.4 ms of CPU per module a
 * rank opens (six in MPI.init and the first collective). The package's door, which the façade
 * would have opened, opens when the bundle first imports something (so that resolves from its
 * package, as before): most bundles never do. Undefined otherwise: import the file.
 */
function loadedPart(file) {
  const dist = dirname(file);
  const bundle = join(dist, BUNDLE);
  const part = loaded.get(bundle)?.exports[basename(file)];
  if (!part) return undefined;
  if (!importers.has(bundle)) {
    importers.set(bundle, (specifier) => {
      importers.delete(bundle);
      require('node:module').createRequire(file)(join(dist, DOOR)); // sets the door's importer
      return (importers.get(bundle) ?? importers.get(ANY))(specifier);
    });
  }
  return part;
}

/**
 * `require` for the code of the bundle `file`: `@ssi/<name>` of a package that has a bundle is
 * that bundle's index (one copy per process, loaded by that package's loader); everything else
 * is Node's require from `file`.
 */
function requireFrom(file) {
  const nodeRequire = building ? building.require : require('node:module').createRequire(file);
  return (specifier) => {
    if (/^@ssi\/[^/]+$/.test(specifier)) {
      let opened = doors.get(specifier);
      if (!opened) {
        const dist = join(dirname(nodeRequire.resolve(`${specifier}/package.json`)), 'dist');
        if (existsSync(join(dist, BUNDLE)) && existsSync(join(dist, DOOR))) {
          opened = require(join(dist, DOOR));
        }
      }
      if (opened) return opened.load()[INDEX];
    }
    return nodeRequire(specifier);
  };
}

/** FNV-1a of a string, as 8 hex digits (names cache files; V8 checks what it loads itself). */
function fnv1a(text) {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0).toString(16).padStart(8, '0');
}

/** Whether `dir` is this user's and no one else may write to it (cached code is run). */
function ownedPrivately(dir) {
  if (!process.getuid) return true;
  const st = statSync(dir);
  return st.uid === process.getuid() && (st.mode & 0o022) === 0;
}

/**
 * The directory of the code caches of bundle `file` (`<package>/dist/ssi-bundle.cjs`), or
 * undefined when none can be used safely.
 */
function cacheDir(file) {
  const setting = process.env.SSI_CODE_CACHE;
  if (setting === 'off' || setting === '0') return undefined;
  try {
    if (!setting && !ownedPrivately(dirname(dirname(file)))) return undefined;
    const dir = setting || join(dirname(dirname(file)), '.ssi-code-cache');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    return ownedPrivately(dir) ? dir : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Where the code cache of bundle `file` lives. V8 accepts cached data by the source's length and
 * its own version and flags only, so the name carries what else must match: the bundle's path,
 * size and modification time (its build), Node's version and architecture. (Node's own options,
 * such as --cpu-prof, do not change the code; a V8 flag that does makes V8 reject the cache,
 * and the run writes a new one.)
 */
function codeCacheOf(file, length) {
  const dir = cacheDir(file);
  if (!dir) return undefined;
  const st = statSync(file);
  const bundle = `${fnv1a(file)}-`;
  const build = `${bundle}${fnv1a(`${length}|${st.size}|${st.mtimeMs}`)}-`;
  const node = `${process.version}|${process.arch}`;
  const path = join(dir, `${build}${fnv1a(node)}.v8cache`);
  return {
    read() {
      try {
        return readFileSync(path);
      } catch {
        return undefined;
      }
    },
    /** Best effort: caches of older builds of the bundle go; failures are ignored. */
    write(data) {
      try {
        const temp = `${path}.${process.pid}.tmp`;
        writeFileSync(temp, data, { mode: 0o600 });
        renameSync(temp, path);
        for (const name of readdirSync(dir)) {
          if (name.startsWith(bundle) && !name.startsWith(build) && name.endsWith('.v8cache')) {
            unlinkSync(join(dir, name));
          }
        }
      } catch {
        // The cache is an optimisation: a full disk or a race with another process costs only it.
      }
    },
  };
}

/**
 * Loads the bundles of `packages` ([{ name, dist }], dependencies first) while Node builds a
 * start-up snapshot (`node --build-snapshot`; see startup-snapshot.cjs): the process that starts
 * from the snapshot has them loaded and run already, and their doors find them in the registry.
 * No user-land module loader may run in a snapshot's builder (Node 20 refuses to start from such a
 * snapshot), so `builtinRequire` (the builder's: Node's built-in modules only) serves the
 * bundles' `require`, and `@ssi/*` packages must be in `packages`, before their importers.
 */
function preloadForSnapshot(packages, builtinRequire) {
  const cannotImport = (specifier) => {
    throw new Error(`import(${specifier}) while a start-up snapshot is built`);
  };
  const resolve = (specifier) => {
    throw new Error(
      `${specifier} is not among the start-up snapshot's packages (list it before its importers)`,
    );
  };
  building = { require: Object.assign((specifier) => builtinRequire(specifier), { resolve }) };
  try {
    for (const { name, dist } of packages) door(dist, cannotImport, name).load();
  } finally {
    building = undefined;
  }
}

module.exports.door = door;
/** Where the code caches of the bundle `file` go, or undefined when none may be kept (above). */
module.exports.codeCacheDir = cacheDir;
module.exports.preloadForSnapshot = preloadForSnapshot;
module.exports.loadedPart = loadedPart;
