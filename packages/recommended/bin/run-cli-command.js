import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

const require = createRequire(import.meta.url);

/**
 * Runs one command of the @ssi/cli this package installed. The meta package has bins of its own
 * because package managers link only a direct dependency's bins (pnpm, and npm when two
 * packages claim a name): `npx mpirun` after `npm install @ssi/recommended` must find them.
 * The command is looked up in @ssi/cli's own `bin` map, its public list of commands.
 */
export async function runCliCommand(command) {
  const pkgFile = require.resolve('@ssi/cli/package.json');
  const bin = JSON.parse(readFileSync(pkgFile, 'utf8')).bin?.[command];
  if (!bin) throw new Error(`@ssi/cli at ${dirname(pkgFile)} has no command "${command}"`);
  await import(pathToFileURL(join(dirname(pkgFile), bin)).href);
}
