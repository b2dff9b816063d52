// Start-up bundles (issue 21): the build step, after tsup, of SSI packages that every MPI rank
// loads (`@ssi/core`, `@ssi/lam`, `@ssi/mpi`, the default plugins). Plain JavaScript, not built.
//
// Why: a rank spent ~100 ms of CPU loading ES modules (resolving ~125 specifiers, compiling
// ~40 files) before it ran a line of MPI; Node 20 has no code cache for ES modules. So the ES
// module files a package's `index.js` reaches (its chunks, inlined `msgpackr`) become one
// CommonJS file, `dist/ssi-bundle.cjs`, compiled with a V8 code cache by `ssi-load.js` (a copy
// of bundle-loader.mjs), and each of those ES module files is replaced by a façade that
// re-exports its part of the loaded bundle. What importers see does not change: the same
// files, the same export names, one copy per process (other `@ssi/*` packages stay external and
// are shared through the loader, so a plugin importing `@ssi/core` by name gets the very object
// the MPI layer uses). Files the index does not reach (test entries, daemons' entries) stay as
// tsup wrote them; where they import a replaced chunk they get the façade.
//
// Usage, in a package's tsup.config.ts: `onSuccess: () => bundleDist(process.cwd())` with
// `import { bundleDist } from '@ssi/core/bundle-dist'` (core itself imports the file by path).
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, posix, relative } from 'node:path';

/** Packages inlined into a bundle instead of required at run time (pure JS, no state shared). */
const INLINED = /^msgpackr(\/|$)/;
const RELATIVE_IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s*)["'](\.\.?\/[^"']+)["']/g;
const STAR_FROM_PACKAGE = /\bexport\s*\*\s*from\s*["'][^./]/;
const DYNAMIC_IMPORT = /(?<![\w$.])import\(/g;
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/** tsup's own esbuild (a dependency of tsup, which every package builds with). */
function esbuildOf(packageDir) {
  const fromPackage = createRequire(join(packageDir, 'package.json'));
  return createRequire(fromPackage.resolve('tsup'))('esbuild');
}

/** The dist-relative paths of the ES module files `entry` reaches by relative imports. */
function reachedFrom(distDir, entry) {
  const seen = new Set([entry]);
  const queue = [entry];
  while (queue.length > 0) {
    const file = queue.shift();
    const source = readFileSync(join(distDir, file), 'utf8');
    for (const match of source.matchAll(RELATIVE_IMPORT)) {
      const target = posix.normalize(posix.join(posix.dirname(file), match[1]));
      if (!seen.has(target)) {
        seen.add(target);
        queue.push(target);
      }
    }
  }
  return [...seen];
}

/** The export names of each file, from esbuild's metafile (no code is run). */
async function exportsOf(esbuild, distDir, files) {
  const result = await esbuild.build({
    entryPoints: files.map((f) => join(distDir, f)),
    absWorkingDir: distDir,
    outdir: join(distDir, '.ssi-exports'),
    bundle: false,
    write: false,
    metafile: true,
    format: 'esm',
    logLevel: 'silent',
  });
  const names = new Map();
  for (const meta of Object.values(result.metafile.outputs)) {
    if (!meta.entryPoint) continue;
    names.set(
      relative(distDir, join(distDir, meta.entryPoint)).split('\\').join('/'),
      meta.exports,
    );
  }
  return names;
}

/**
 * `import(x)` left in the bundle (packages and absolute URLs: relative ones are bundled) becomes
 * `__ssiI(x)`, the loader's own import (a vm script's `import()` would need an experimental
 * flag). Same length, so the source map's columns stay right.
 */
function rewriteDynamicImports(source) {
  return source.replace(DYNAMIC_IMPORT, '__ssiI(');
}

/** One-character stand-ins for the characters beyond Latin-1 that comments here use. */
const STAND_INS = {
  '\u2192': '>',
  '\u2190': '<',
  '\u2014': '-',
  '\u2013': '-',
  '\u2264': '<',
  '\u2265': '>',
};

/**
 * The bundle with every character beyond Latin-1 replaced by a one-character stand-in (`→` by
 * `>`, others by `?`). esbuild writes code as ASCII (its default charset escapes strings,
 * templates, regular expressions and identifiers), so such characters are in comments only; but
 * one of them makes V8 keep the whole source as a two-byte string: for `@ssi/mpi` (26 arrows and
 * dashes in doc comments) 0.9 instead of 0.46 MB in every rank's heap and start-up snapshot.
 * One character for one keeps the source map's columns (an astral character, two UTF-16 units,
 * becomes two).
 */
function latin1Comments(source) {
  return source.replace(/[\u0100-\uffff]/g, (c) => STAND_INS[c] ?? '?');
}

/**
 * The package's door to the loader (`@ssi/core/bundle-loader`, core's own by path; the loader
 * already running in the process when there is one, so no door resolves @ssi/core again).
 */
function doorSource(packageDir) {
  const name = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')).name;
  const loader = name === '@ssi/core' ? '../scripts/bundle-loader.cjs' : '@ssi/core/bundle-loader';
  return [
    "// Generated by @ssi/core/bundle-dist: this package's door to its start-up bundle.",
    "const loader = globalThis[Symbol.for('@ssi/start-up-bundles.loader')];",
    `const { door } = loader ?? require('${loader}');`,
    `module.exports = door(__dirname, (specifier) => import(specifier), ${JSON.stringify(name)});`,
    '',
  ].join('\n');
}

/** The façade that replaces `file`: its export names, bound to its part of the loaded bundle. */
function facadeSource(file, names) {
  const depth = file.split('/').length - 1;
  const loader = depth === 0 ? './ssi-load.cjs' : `${'../'.repeat(depth)}ssi-load.cjs`;
  const named = names.filter((n) => n !== 'default');
  const bad = named.filter((n) => !IDENTIFIER.test(n));
  if (bad.length > 0) throw new Error(`bundle-dist: ${file} exports names a façade cannot: ${bad}`);
  const lines = [
    '// Generated by @ssi/core/bundle-dist: this module is a part of ssi-bundle.cjs (start-up bundle).',
    "import { createRequire } from 'node:module';",
    `const __ssiPart = createRequire(import.meta.url)('${loader}').load()[${JSON.stringify(file)}];`,
  ];
  if (named.length > 0) lines.push(`export const { ${named.join(', ')} } = __ssiPart;`);
  if (names.includes('default')) lines.push('export default __ssiPart.default;');
  return `${lines.join('\n')}\n`;
}

/**
 * Bundles what `dist/index.js` of the package at `packageDir` reaches into `dist/ssi-bundle.cjs`,
 * copies the loader beside it and replaces the bundled ES module files by façades.
 */
export async function bundleDist(packageDir, { entry = 'index.js' } = {}) {
  const esbuild = esbuildOf(packageDir);
  const distDir = join(packageDir, 'dist');
  const files = reachedFrom(distDir, entry);
  const exportNames = await exportsOf(esbuild, distDir, files);
  const parts = files.map((f) => `export * as ${JSON.stringify(f)} from './${f}';`).join('\n');
  await esbuild.build({
    stdin: { contents: parts, resolveDir: distDir, sourcefile: 'ssi-bundle-parts.js' },
    outfile: join(distDir, 'ssi-bundle.cjs'),
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    sourcemap: true,
    logLevel: 'warning',
    // Every file of dist/ sits in dist/ or below, like the bundle: URLs made from it resolve alike.
    define: { 'import.meta.url': '__ssiBundleUrl' },
    banner: { js: 'var __ssiBundleUrl = require("node:url").pathToFileURL(__filename).href;' },
    plugins: [
      {
        name: 'ssi-externals',
        setup(build) {
          build.onResolve({ filter: /^[^./]/ }, (args) =>
            INLINED.test(args.path) ? undefined : { path: args.path, external: true },
          );
        },
      },
    ],
  });
  const bundleFile = join(distDir, 'ssi-bundle.cjs');
  writeFileSync(
    bundleFile,
    latin1Comments(rewriteDynamicImports(readFileSync(bundleFile, 'utf8'))),
  );
  writeFileSync(join(distDir, 'ssi-load.cjs'), doorSource(packageDir));
  for (const file of files) {
    if (STAR_FROM_PACKAGE.test(readFileSync(join(distDir, file), 'utf8'))) {
      throw new Error(`bundle-dist: ${file} re-exports a package with export *; a façade cannot`);
    }
  }
  for (const file of files) {
    const names = exportNames.get(file);
    if (!names) throw new Error(`bundle-dist: no exports found for ${file}`);
    writeFileSync(join(distDir, file), facadeSource(file, names));
    if (existsSync(join(distDir, `${file}.map`))) rmSync(join(distDir, `${file}.map`));
  }
}
