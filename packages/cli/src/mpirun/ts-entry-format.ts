import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * The one place mpirun decides the module format of a TypeScript entry point.
 *
 * tsx compiles a `.ts` file as CommonJS unless its package says `"type": "module"`, and
 * CommonJS has no top-level await: a user's `app.ts` beside a default `package.json` then fails
 * in every rank with esbuild's "Top-level await is currently not supported with the cjs output
 * format". Such a file cannot run as CommonJS at all, so it runs as an ES module instead; every
 * file that compiles as CommonJS keeps running exactly as before (`require`, `__dirname`).
 */

const decided = new Map<string, boolean>();

/** True when `file` (a `.ts` entry) must run as an ES module though its package scope is CommonJS. */
export function mustRunAsEsm(file: string): boolean {
  let answer = decided.get(file);
  if (answer === undefined) {
    answer = /\.ts$/.test(file) && packageType(dirname(file)) !== 'module' && !compilesAsCjs(file);
    decided.set(file, answer);
  }
  return answer;
}

/**
 * A `--import` URL that makes Node load `file` (and only it) as an ES module: a resolve hook,
 * registered after tsx's so it runs first, that marks the entry's format. tsx then compiles it
 * as ESM. Inline `data:` URLs, so nothing needs to exist on the node running the rank.
 */
export function esmEntryImport(file: string): string {
  const entry = pathToFileURL(file).href;
  const hooks =
    'export async function resolve(s, c, next) { const r = await next(s, c); ' +
    `return r.url === ${JSON.stringify(entry)} ? { ...r, format: 'module' } : r; }`;
  const register =
    `import { register } from 'node:module'; ` +
    `register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hooks)}`)});`;
  return `data:text/javascript,${encodeURIComponent(register)}`;
}

/** `"type"` of the nearest package.json above `dir`, as Node and tsx look it up. */
function packageType(dir: string): string | undefined {
  for (let d = dir; ; d = dirname(d)) {
    const pkg = join(d, 'package.json');
    if (existsSync(pkg)) {
      try {
        return JSON.parse(readFileSync(pkg, 'utf8')).type;
      } catch {
        return undefined; // Node reports a broken package.json itself, in the rank
      }
    }
    if (dirname(d) === d) return undefined;
  }
}

/** Whether esbuild (tsx's compiler) can turn the file into CommonJS. */
function compilesAsCjs(file: string): boolean {
  // Loaded here, not at the top: importing esbuild costs ~70 ms of CPU, which every mpirun of a
  // JavaScript program would pay for nothing (issue 19's start-up).
  const { transformSync } = createRequire(import.meta.url)('esbuild') as typeof import('esbuild');
  try {
    transformSync(readFileSync(file, 'utf8'), { loader: 'ts', format: 'cjs', sourcefile: file });
    return true;
  } catch (err) {
    // Only the module format is decided here; other errors (syntax) are tsx's to report.
    return !/top-level await/i.test(String((err as Error)?.message));
  }
}
