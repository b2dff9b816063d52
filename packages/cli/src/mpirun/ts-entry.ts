import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join } from 'node:path';

/**
 * TypeScript entry points compiled once per job (issue 19's start-up, issue 21): loading tsx in
 * every rank costs ~130 ms of CPU each, so mpirun compiles the entry and its local imports once
 * with esbuild into one ES module and the ranks run plain JavaScript. Node 20 has no type
 * stripping of its own (`--experimental-strip-types` came with Node 22.6), so this is the way here.
 *
 * The output goes to `node_modules/.cache/ssi-mpirun/<sha256 of the output>.mjs` in the nearest
 * directory above the entry that has a `node_modules`: package imports stay bare and resolve from
 * there exactly as from the entry, and the name is the content, so concurrent jobs and later runs
 * share a file and never see a half-written one (written aside, then renamed). A source map next
 * to it (and ranks started with --enable-source-maps) keeps stack traces on the user's .ts lines.
 *
 * Whatever a single bundle would run differently runs through tsx as before (the reason is
 * returned): CommonJS sources (require, module.exports), code that asks where its file is
 * (import.meta, __dirname, __filename), a package import that resolves to TypeScript source, no
 * node_modules above the entry, a cache directory that cannot be written, or a compile error
 * (tsx then reports it in every rank, as before).
 */

export type TsEntry = { file: string } | { tsx: string };

/** Where the compiled entries of `entry` go, or undefined when no node_modules is above it. */
export function cacheDirFor(entry: string): string | undefined {
  let dir = dirname(entry);
  for (;;) {
    if (existsSync(join(dir, 'node_modules')))
      return join(dir, 'node_modules', '.cache', 'ssi-mpirun');
    const up = dirname(dir);
    if (up === dir) return undefined;
    dir = up;
  }
}

/** Source text that a bundle in another directory would run differently. */
const PLACE_BOUND =
  /\bimport\.meta\b|\b__dirname\b|\b__filename\b|\brequire\s*\(|\bmodule\.exports\b/;
const TS_FILE = /\.(c|m)?tsx?$/;
const BUILTINS = new Set(builtinModules);

export async function compileTsEntry(entry: string): Promise<TsEntry> {
  const cacheDir = cacheDirFor(entry);
  if (!cacheDir) return { tsx: 'no node_modules directory above the program' };
  const esbuild = await import('esbuild');
  let why: string | undefined;
  const result = await esbuild
    .build({
      entryPoints: [entry],
      bundle: true,
      write: false,
      format: 'esm',
      platform: 'node',
      target: `node${process.versions.node}`,
      outfile: join(cacheDir, 'entry.mjs'), // the real name is set below, from the content
      sourcemap: 'external',
      metafile: true,
      logLevel: 'silent',
      plugins: [
        {
          name: 'ssi-packages-stay-bare',
          setup(build) {
            // Packages are imported at run time from the cache directory, where they resolve as
            // from the entry; one whose import resolves to TypeScript needs tsx in the ranks.
            build.onResolve({ filter: /^[^./]/ }, async (args) => {
              if (args.pluginData === 'inner') return undefined;
              if (args.path.startsWith('node:') || BUILTINS.has(args.path.split('/')[0]!))
                return { path: args.path, external: true };
              const r = await build.resolve(args.path, {
                kind: args.kind,
                resolveDir: args.resolveDir,
                importer: args.importer,
                pluginData: 'inner',
              });
              if (r.errors.length === 0 && TS_FILE.test(r.path))
                why ??= `the package import "${args.path}" resolves to TypeScript (${r.path})`;
              return { path: args.path, external: true };
            });
          },
        },
      ],
    })
    .catch((err: Error) => {
      why = `esbuild could not compile it (${err.message.split('\n')[0]})`;
      return undefined;
    });
  if (!result) return { tsx: why! };
  if (why) return { tsx: why };
  for (const [input, meta] of Object.entries(result.metafile.inputs)) {
    if (meta.format === 'cjs') return { tsx: `${input} is CommonJS` };
    const text = readFileSync(join(process.cwd(), input), 'utf8');
    if (PLACE_BOUND.test(text))
      return { tsx: `${input} uses import.meta, __dirname, __filename or require` };
  }
  return writeCompiled(cacheDir, result.outputFiles);
}

/** Writes the compiled module and its map under a name of their content; reuses an existing one. */
function writeCompiled(
  cacheDir: string,
  outputs: readonly { path: string; text: string }[],
): TsEntry {
  const js = outputs.find((o) => o.path.endsWith('.mjs'))!;
  const map = outputs.find((o) => o.path.endsWith('.map'));
  const hash = createHash('sha256')
    .update(js.text)
    .update(map?.text ?? '')
    .digest('hex')
    .slice(0, 32);
  const file = join(cacheDir, `${hash}.mjs`);
  if (existsSync(file)) return { file };
  try {
    mkdirSync(cacheDir, { recursive: true });
    const code = js.text.replace(/\/\/# sourceMappingURL=\S+\s*$/, '');
    const tmp = `${file}.${process.pid}.tmp`;
    if (map) {
      writeFileSync(`${tmp}.map`, map.text);
      renameSync(`${tmp}.map`, `${file}.map`);
    }
    writeFileSync(tmp, map ? `${code}//# sourceMappingURL=${hash}.mjs.map\n` : code);
    renameSync(tmp, file);
    return { file };
  } catch (err) {
    return { tsx: `cannot write ${cacheDir} (${(err as Error).message})` };
  }
}
